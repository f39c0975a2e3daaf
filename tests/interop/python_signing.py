"""Agent card signatures with the official Python `a2a-sdk` (`a2a.utils.signing`,
the `signing` extra: PyJWT and cryptography), for the Rust side's cross-SDK
tests (tests/interop/interop_python_signing.rs).

Usage:

- `python_signing.py keygen DIR`: writes one key pair per algorithm the
  test uses, `DIR/ALG.pem` (PKCS#8 private key) and `DIR/ALG.pub.pem` (SPKI
  public key), for ES256 (P-256), RS256 (RSA 2048) and EdDSA (Ed25519).
- `python_signing.py serve KEY ALG PORT [--tamper | --jku]`: serves, with the
  SDK's own card route (`create_agent_card_routes`), a card signed by the
  SDK's signer with KEY (`kid` = the key file name without `.pem`). With
  `--tamper`, the card's description is changed after signing. With `--jku`,
  the protected header has `jku` = `BASE/jwks.json`, where the public key is
  served as a JWKS (PyJWT's `to_jwk`). Prints
  `listening on http://127.0.0.1:PORT` (0 picks a free port), then serves
  until killed.
- `python_signing.py verify URL PUB ALG`: fetches the card at URL, parses it
  as the SDK's client does (`parse_agent_card`) and checks its signatures
  with the SDK's verifier, trusting the public key PUB for ALG; then changes
  the card's name and checks again. Prints `VERIFIED` or `REFUSED: WHY` for
  each, then `PYTHON SIGNING OK`.
"""

import asyncio
import json
import os
import socket
import sys

import httpx
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from google.protobuf import struct_pb2
from jwt.algorithms import get_default_algorithms
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.client.card_resolver import parse_agent_card
from a2a.server.routes import create_agent_card_routes
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
)
from a2a.utils.signing import (
    SignatureVerificationError,
    create_agent_card_signer,
    create_signature_verifier,
)

ALGORITHMS = ("ES256", "RS256", "EdDSA")


def keygen(directory: str) -> None:
    keys = {
        "ES256": ec.generate_private_key(ec.SECP256R1()),
        "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "EdDSA": ed25519.Ed25519PrivateKey.generate(),
    }
    for alg, key in keys.items():
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        public = key.public_key().public_bytes(
            serialization.Encoding.PEM,
            serialization.PublicFormat.SubjectPublicKeyInfo,
        )
        with open(os.path.join(directory, f"{alg}.pem"), "wb") as f:
            f.write(private)
        with open(os.path.join(directory, f"{alg}.pub.pem"), "wb") as f:
            f.write(public)


def card(base: str) -> AgentCard:
    """A card using most of the fields: nested objects, lists, an empty
    string (stripped by the SDK's signer), extension params with an integer
    (a double in protobuf's Struct) and a non-ASCII text."""
    params = struct_pb2.Struct()
    params.update({"limit": 3, "ratio": 0.5, "note": "café ☕", "empty": ""})
    return AgentCard(
        name="Python signed agent",
        description="A card signed by a2a-sdk — for the Rust verifier.",
        version="1.0.0",
        documentation_url="",
        provider=AgentProvider(organization="Interop", url="https://example.com"),
        supported_interfaces=[
            AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            extensions=[
                AgentExtension(
                    uri="https://example.com/ext/v1",
                    description="An extension with params",
                    params=params,
                )
            ],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes text.",
                tags=["test", "echo"],
                examples=["hello"],
            )
        ],
    )


def kid_of(key_file: str) -> str:
    return os.path.basename(key_file).removesuffix(".pem")


async def serve(key_file: str, alg: str, port: int, tamper: bool, jku: bool) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with open(key_file, "rb") as f:
        private = serialization.load_pem_private_key(f.read(), password=None)
    header = {"alg": alg, "kid": kid_of(key_file), "typ": "JOSE"}
    routes = []
    if jku:
        header["jku"] = f"{base}/jwks.json"
        jwk = json.loads(get_default_algorithms()[alg].to_jwk(private.public_key()))
        jwk["kid"] = kid_of(key_file)
        jwks = {"keys": [jwk]}

        async def key_set(_request):
            return JSONResponse(jwks)

        routes.append(Route("/jwks.json", key_set))
    signer = create_agent_card_signer(signing_key=private, protected_header=header)
    signed = signer(card(base))
    if tamper:
        signed.description = "Tampered after signing."
    app = Starlette(routes=[*create_agent_card_routes(signed), *routes])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"listening on {base}", flush=True)
    await server.serve(sockets=[sock])


def verify(url: str, public_file: str, alg: str) -> None:
    with open(public_file, "rb") as f:
        public = serialization.load_pem_public_key(f.read())
    kid = kid_of(public_file).removesuffix(".pub")

    def key_provider(got_kid: str | None, _jku: str | None):
        if got_kid != kid:
            raise SignatureVerificationError(f"unknown kid {got_kid!r}")
        return public

    verifier = create_signature_verifier(key_provider, [alg])
    data = httpx.get(url, timeout=30).raise_for_status().json()
    for name in ("as served", "tampered"):
        parsed = parse_agent_card(dict(data))
        if name == "tampered":
            parsed.name = parsed.name + " (tampered)"
        try:
            verifier(parsed)
            print(f"{name}: VERIFIED", flush=True)
        except SignatureVerificationError as e:
            print(f"{name}: REFUSED: {type(e).__name__}: {e}", flush=True)
    print("PYTHON SIGNING OK", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["keygen"] and len(args) == 2:
        keygen(args[1])
    elif args[:1] == ["serve"] and len(args) in (4, 5) and args[2] in ALGORITHMS:
        if args[4:] not in ([], ["--tamper"], ["--jku"]):
            print(__doc__, file=sys.stderr)
            sys.exit(2)
        asyncio.run(
            serve(args[1], args[2], int(args[3]), args[4:] == ["--tamper"], args[4:] == ["--jku"])
        )
    elif args[:1] == ["verify"] and len(args) == 4 and args[3] in ALGORITHMS:
        verify(args[1], args[2], args[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
