"""``tracker new``'s start lists (issue 37, item 9): the same player twice, and a line that does not split
into its columns, are refused with their line numbers."""

from __future__ import annotations

import pytest

from tracker.core.errors import FormatError
from tracker.formats.startlist import parse_startlist


def refusal(text: str, path: str) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse_startlist(text, path)
    return caught.value


def test_the_same_name_twice_is_refused_with_both_lines() -> None:
    """Reproduction: the same player listed twice was accepted as two players."""
    error = refusal("Doe, Jane 2100\nRoe, Rick 1800\n\ndoe,  jane 2100\n", "players.txt")
    assert (
        error.line == 4
        and "already on line 1" in str(error)
        and "(lines 1 and 4)" in str(error)
        and "'doe, jane'" in str(error)
    )


def test_the_same_fide_id_twice_is_refused_with_both_lines() -> None:
    text = "name,rating,fide_id\nDoe Jane,2100,1503014\nRoe Rick,1800,2000001\nDoe J.,2100,1503014\n"
    error = refusal(text.replace(",", ";"), "players.csv")
    assert error.line == 4 and "1503014 is already on line 2" in str(error) and "(lines 2 and 4)" in str(error)


def test_a_text_line_with_another_separator_is_refused_with_its_line() -> None:
    """Reproduction: ``Roe, Rick;1800`` (a semicolon where a space belongs) was kept as a name."""
    error = refusal("Doe, Jane 2100\nRoe, Rick;1800\n", "players.txt")
    assert error.line == 2 and "does not split into a name, a rating and a FIDE id" in str(error)


def test_a_csv_row_with_more_cells_than_the_header_is_refused_with_its_line() -> None:
    error = refusal("name;rating\nDoe, Jane;2100\nRoe, Rick;1800;2000001;FRA\n", "players.csv")
    assert error.line == 3 and "4 columns where the header names 2" in str(error)


def test_a_csv_row_in_another_separator_is_refused_with_its_line() -> None:
    error = refusal('name,rating\n"Doe, Jane",2100\nRoe; Rick;1800\n', "players.csv")
    assert error.line == 3 and "does not split into the expected columns" in str(error)


def test_well_formed_lists_still_read() -> None:
    players = parse_startlist("# seeded\nCarlsen, Magnus 2830 1503014\nCaruana, Fabiano 2800\n", "p.txt")
    assert [(p.name, p.rating, p.fide_id) for p in players] == [
        ("Carlsen, Magnus", 2830, "1503014"),
        ("Caruana, Fabiano", 2800, ""),
    ]
    csv_players = parse_startlist("Name\tElo\nDoe, Jane\t2100\nRoe, Rick\n", "p.csv")
    assert [(p.name, p.rating) for p in csv_players] == [("Doe, Jane", 2100), ("Roe, Rick", 0)]
