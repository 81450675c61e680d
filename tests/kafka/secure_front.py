"""A TLS and SASL front for the test broker: ``python -m tests.kafka.secure_front``.

Tansu 0.6 can neither serve TLS from its command line (``--cert`` and
``--key`` exclude each other) nor hold SASL users in its memory storage
(creating one needs an authenticated connection), so the tests put this in
front of it: it terminates TLS with a test certificate and/or answers the
SASL handshake itself (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, checked against
one user), then passes the bytes through to Tansu, which advertises the
front's port.  A client that sends anything but ``ApiVersions`` before it
authenticated is disconnected, as a SASL listener does.  So the clients'
real TLS and SASL code runs against a real Kafka-protocol broker.

``--client-ca`` makes the TLS listener require a client certificate signed
by that CA (mTLS); ``--sasl OAUTHBEARER`` checks the bearer token against
the first line of ``--password-file``, read again at every login (so a test
can rotate it), and prints ``token accepted: TOKEN`` for each login.

Prints ``secure front ready`` once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import secrets
import ssl
import struct
from pathlib import Path

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM = 58, 33
HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    size = struct.unpack(">i", await reader.readexactly(4))[0]
    return await reader.readexactly(size)


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def string(value: str | None) -> bytes:
    if value is None:
        return struct.pack(">h", -1)
    data = value.encode()
    return struct.pack(">h", len(data)) + data


class Scram:
    """The server side of one SCRAM exchange (RFC 5802) for one user."""

    def __init__(self, mechanism: str, user: str, password: str) -> None:
        self.hash = HASHES[mechanism]
        self.user, self.password = user, password
        self.salt, self.iterations = secrets.token_bytes(16), 4096
        self.messages: list[str] = []
        self.nonce = ""

    def _hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash).digest()

    def first(self, client_first: str) -> tuple[bool, str]:
        bare = client_first.split(",", 2)[2]
        fields = dict(part.split("=", 1) for part in bare.split(","))
        if fields.get("n") != self.user:
            return False, "unknown user"
        self.nonce = fields["r"] + secrets.token_hex(12)
        server_first = f"r={self.nonce},s={base64.b64encode(self.salt).decode()},i={self.iterations}"
        self.messages = [bare, server_first]
        return True, server_first

    def final(self, client_final: str) -> tuple[bool, str]:
        without_proof, _, proof = client_final.rpartition(",p=")
        fields = dict(part.split("=", 1) for part in without_proof.split(","))
        if fields.get("r") != self.nonce:
            return False, "nonce mismatch"
        auth = ",".join([*self.messages, without_proof]).encode()
        salted = hashlib.pbkdf2_hmac(self.hash, self.password.encode(), self.salt, self.iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored = hashlib.new(self.hash, client_key).digest()
        signature = self._hmac(stored, auth)
        recovered = bytes(a ^ b for a, b in zip(base64.b64decode(proof), signature, strict=True))
        if hashlib.new(self.hash, recovered).digest() != stored:
            return False, "wrong password"
        server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth)
        return True, "v=" + base64.b64encode(server_signature).decode()


class Front:
    def __init__(
        self, upstream: int, mechanism: str | None, user: str, password: str, password_file: str | None = None
    ) -> None:
        self.upstream, self.mechanism, self.user, self.password = upstream, mechanism, user, password
        self.password_file = password_file

    async def serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            broker_r, broker_w = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            client_w.close()
            return
        try:
            if self.mechanism is None or await self.authenticate(client_r, client_w, broker_r, broker_w):
                await asyncio.gather(pipe(client_r, broker_w), pipe(broker_r, client_w))
        except (OSError, asyncio.IncompleteReadError, ValueError, KeyError, IndexError):
            pass
        finally:
            broker_w.close()
            client_w.close()

    async def authenticate(
        self,
        client_r: asyncio.StreamReader,
        client_w: asyncio.StreamWriter,
        broker_r: asyncio.StreamReader,
        broker_w: asyncio.StreamWriter,
    ) -> bool:
        """Answer the SASL exchange; return whether the client proved it is the user."""
        scram: Scram | None = None
        step = 0
        while True:
            request = await read_frame(client_r)
            api_key, version, correlation, client_len = struct.unpack(">hhih", request[:10])
            body = request[10 + max(client_len, 0) :]
            head = struct.pack(">i", correlation)
            if api_key == API_VERSIONS:  # clients ask before they authenticate
                broker_w.write(frame(request))
                client_w.write(frame(await read_frame(broker_r)))
                continue
            if api_key == SASL_HANDSHAKE:
                (size,) = struct.unpack(">h", body[:2])
                wanted = body[2 : 2 + size].decode()
                error = 0 if wanted == self.mechanism else UNSUPPORTED_SASL_MECHANISM
                client_w.write(frame(head + struct.pack(">hi", error, 1) + string(self.mechanism)))
                if error:
                    return False
                if wanted in HASHES:
                    scram = Scram(wanted, self.user, self.password)
                continue
            if api_key != SASL_AUTHENTICATE or version > 1:
                return False  # a SASL listener takes nothing else before the login
            (size,) = struct.unpack(">i", body[:4])
            token = body[4 : 4 + size].decode()
            if self.mechanism == "OAUTHBEARER":  # RFC 7628: gs2 header, then kvpairs separated by \x01
                fields = dict(kv.split("=", 1) for kv in token.split("\x01")[1:] if "=" in kv)
                bearer = fields.get("auth", "").removeprefix("Bearer ")
                expected = Path(self.password_file).read_text().splitlines()[0] if self.password_file else ""  # noqa: ASYNC240
                ok, reply, done = bearer == expected, "", True
                if ok:
                    print(f"token accepted: {bearer}", flush=True)
            elif scram is None:  # PLAIN: authzid NUL user NUL password
                _, user, password = token.split("\0")
                ok, reply, done = (user == self.user and password == self.password), "", True
            else:
                ok, reply = scram.first(token) if step == 0 else scram.final(token)
                done = step == 1
            step += 1
            error = 0 if ok else SASL_AUTHENTICATION_FAILED
            message = None if ok else f"Authentication failed: {reply or 'invalid credentials'}"
            payload = b"" if not ok else reply.encode()
            response = head + struct.pack(">h", error) + string(message) + struct.pack(">i", len(payload)) + payload
            if version == 1:
                response += struct.pack(">q", 0)
            client_w.write(frame(response))
            await client_w.drain()
            if not ok:
                return False
            if done:
                return True


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--upstream", type=int, required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--sasl", choices=["PLAIN", "OAUTHBEARER", *HASHES])
    parser.add_argument("--client-ca", help="require a client certificate signed by this CA (mTLS)")
    parser.add_argument("--user", default="tracker")
    parser.add_argument("--password-file")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
        if args.client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args.client_ca)
    password = Path(args.password_file).read_text().strip() if args.password_file else ""  # noqa: ASYNC240
    front = Front(args.upstream, args.sasl, args.user, password, args.password_file)
    server = await asyncio.start_server(front.serve, "127.0.0.1", args.listen, ssl=context)
    print("secure front ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
