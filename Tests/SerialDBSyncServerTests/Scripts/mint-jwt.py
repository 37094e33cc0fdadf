#!/usr/bin/env python3
"""Mints JSON Web Tokens for the sync server's tests with PyJWT, as an identity provider would.

Takes one JSON object as its argument:

    {"dir": "/tmp/x",                       where private keys are generated and kept
     "jwks": {"path": "/tmp/x/jwks.json",   optional: writes a JWKS of these keys' public halves
              "keys": ["rsa-1", "ec-1"]},
     "tokens": [{"key": "rsa-1", "alg": "RS256", "claims": {...}, "headers": {...}},
                {"secret_file": "/tmp/x/secret", "alg": "HS256", "claims": {...}},
                {"hmac_with_public_key": "rsa-1", "claims": {...}}]}

A key name starting with "rsa1024" is an RSA 1024 key (too short for the server), another one
starting with "rsa" an RSA 2048 key, one starting with "ec" a P-256 key; each is
generated the first time it is named (private keys never leave the directory) and its kid is
its name. "hmac_with_public_key" signs HS256 with the PEM of that key's public half as the
secret (the algorithm-confusion attack; PyJWT refuses to do it, so the standard library's hmac
does). A header given as null is left out (`"kid": null`: a token that names no key). Prints a
JSON array of the tokens, in order.
"""

import base64
import hashlib
import hmac
import json
import os
import sys

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm


def private_key(directory, name):
    path = os.path.join(directory, name + ".pem")
    if os.path.exists(path):
        with open(path, "rb") as file:
            return serialization.load_pem_private_key(file.read(), password=None)
    if name.startswith("rsa"):
        key = rsa.generate_private_key(public_exponent=65537, key_size=1024 if name.startswith("rsa1024") else 2048)
    elif name.startswith("ec"):
        key = ec.generate_private_key(ec.SECP256R1())
    else:
        raise SystemExit(f"mint-jwt: key names start with rsa or ec, not {name!r}")
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with open(path, "wb") as file:
        file.write(pem)
    return key


def public_jwk(directory, name):
    public = private_key(directory, name).public_key()
    algorithm = RSAAlgorithm if name.startswith("rsa") else ECAlgorithm
    jwk = json.loads(algorithm.to_jwk(public))
    if name.startswith("ec"):
        # A coordinate is the full 32 bytes of P-256 (RFC 7518, 6.2.1.2), leading zeros kept:
        # PyJWT drops them, so about one key in 128 had a 31-byte "x" or "y", which the server
        # rightly refuses, and the test that drew it failed.
        numbers = public.public_numbers()
        jwk["x"] = b64url(numbers.x.to_bytes(32, "big"))
        jwk["y"] = b64url(numbers.y.to_bytes(32, "big"))
    jwk["kid"] = name
    jwk["use"] = "sig"
    return jwk


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(directory, spec):
    claims = spec.get("claims", {})
    headers = spec.get("headers", {})
    if "hmac_with_public_key" in spec:
        public = private_key(directory, spec["hmac_with_public_key"]).public_key()
        secret = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        header = {"alg": "HS256", "typ": "JWT", "kid": spec["hmac_with_public_key"], **headers}
        signed = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        return signed + "." + b64url(hmac.new(secret, signed.encode(), hashlib.sha256).digest())
    if "secret_file" in spec:
        with open(spec["secret_file"], "rb") as file:
            # The server's reading: the file's bytes without a final line break.
            key = file.read().removesuffix(b"\n").removesuffix(b"\r")
    else:
        key = private_key(directory, spec["key"])
        headers = {"kid": spec["key"], **headers}
    headers = {name: value for name, value in headers.items() if value is not None}
    return jwt.encode(claims, key, algorithm=spec["alg"], headers=headers)


def main():
    request = json.loads(sys.argv[1])
    directory = request["dir"]
    if "jwks" in request:
        keys = [public_jwk(directory, name) for name in request["jwks"]["keys"]]
        with open(request["jwks"]["path"], "w") as file:
            json.dump({"keys": keys}, file)
    json.dump([mint(directory, spec) for spec in request.get("tokens", [])], sys.stdout)


if __name__ == "__main__":
    main()
