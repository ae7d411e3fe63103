"""DPoP proofs (RFC 9449 §4.3) checked one by one, in process, and under Hypothesis.

``check_proof`` gets real proofs a client key signs (joserfc), each with one fault;
``BearerAuth.admit`` gets tokens the provider's key signs with a ``cnf.jkt`` and a
``Presentation`` as the HTTP app builds it, with a real ``MemoryStore``. The
properties: random proofs (JWT-shaped junk, and correctly signed ones with any
claim values) never raise and never admit a proof that breaks a rule.
"""

from __future__ import annotations

import base64
import json
import pickle
import time
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joserfc import jws, jwt
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey
from oauth_provider import AUDIENCE, DPoPKey, Provider, signed, token_hash, valid_claims
from support.strategies import json_trees
from test_authorization_fuzz import app_for, asgi_post

from trio_mcp import McpError, ProtectedResource
from trio_mcp._http._oauth import Admission, Challenge, Presentation
from trio_mcp._store import MemoryStore
from trio_mcp.auth import BearerAuth, TokenPrincipal
from trio_mcp.auth._dpop import (
    DPOP_ALGORITHMS,
    MAX_JTI,
    MAX_PROOF,
    InvalidProof,
    Proof,
    binding_of,
    check_proof,
)
from trio_mcp.auth._jwt import deprecated_name_allowed

URL = "http://127.0.0.1:8000/mcp"
TOKEN = "an-access-token"
URLS = (URL, AUDIENCE)


def check(proof: str | None, key: DPoPKey, **changes: Any) -> Proof:
    options: dict[str, Any] = {
        "token": TOKEN,
        "jkt": key.thumbprint,
        "method": "POST",
        "urls": URLS,
        "leeway": 300.0,
        **changes,
    }
    return check_proof(proof, **options)


#: Every refusal of a proof, word for word: what a client developer reads.
REFUSALS = frozenset(
    {
        "a DPoP-bound token needs a DPoP proof header",
        "send exactly one DPoP proof, of at most 8 KiB",
        "the DPoP proof is not a well-formed JWT",
        "the DPoP proof's type (typ) must be dpop+jwt",
        "the DPoP proof's algorithm (alg) is not accepted",
        "the DPoP proof carries no public key (jwk)",
        "the DPoP proof's jwk must be a public key",
        "the DPoP proof's jwk is not an RSA, EC or OKP key",
        "the DPoP proof's jwk is not a usable key",
        "the DPoP proof's signature does not verify",
        "the DPoP proof is signed by another key than the token's",
        "the DPoP proof is for another HTTP method (htm)",
        "the DPoP proof is for another URL (htu)",
        "the DPoP proof has no issue time (iat)",
        "the DPoP proof is too old or from the future (iat)",
        "the DPoP proof is for another access token (ath)",
        "the DPoP proof has no usable identifier (jti)",
    }
)


def refused_for(words: str, proof: str | None, key: DPoPKey, **changes: Any) -> None:
    with pytest.raises(InvalidProof) as refused:
        check(proof, key, **changes)
    assert words in str(refused.value)
    assert str(refused.value) in REFUSALS


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_with(key: Any, header: dict[str, Any], alg: str = "ES256") -> str:
    """A good proof's claims under ``header`` as given (no defaults, no checks of
    its members), signed by ``key`` with ``alg``."""
    payload = {"jti": "j", "htm": "POST", "htu": URL, "iat": int(time.time())}
    payload["ath"] = token_hash(TOKEN)
    head = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    with deprecated_name_allowed(alg):
        algorithm = jws.JWSRegistry(algorithms=[alg]).get_alg(alg)
        return head + "." + b64(algorithm.sign(head.encode(), key))


# -- a good proof ---------------------------------------------------------------------------
def test_a_good_proof_gives_its_key_jti_and_time() -> None:
    key = DPoPKey()
    now = int(time.time())

    proof = check(key.proof("POST", URL, TOKEN, jti="one", iat=now), key)

    assert Proof(key.thumbprint, "one", now) == proof


def test_the_replay_key_is_a_digest_of_the_key_and_the_jti() -> None:
    one, same = Proof("k", "jti-1", 1.0), Proof("k", "jti-1", 2.0)
    other_jti, other_key = Proof("k", "jti-2", 1.0), Proof("k2", "jti-1", 1.0)

    assert one.replay_key() == same.replay_key()
    assert len({one.replay_key(), other_jti.replay_key(), other_key.replay_key()}) == 3
    assert one.replay_key().startswith("dpop-jti:")
    assert "jti-1" not in one.replay_key()
    assert 9 + 64 == len(one.replay_key())


# -- check 1: one well-formed proof ---------------------------------------------------------
@pytest.mark.parametrize("proof", [None, ""])
def test_no_proof_is_refused(proof: str | None) -> None:
    refused_for("needs a DPoP proof header", proof, DPoPKey())


def test_two_proofs_are_refused() -> None:
    key = DPoPKey()
    two = key.proof("POST", URL, TOKEN) + "," + key.proof("POST", URL, TOKEN)

    refused_for("exactly one DPoP proof", two, key)


def test_a_proof_of_8_kib_is_read_and_one_byte_more_is_not() -> None:
    key = DPoPKey()
    sizes: dict[int, str] = {}
    for filler in range(5_740, 5_760):
        for extra in ("a", "ab", "abc", "abcd"):
            proof = key.proof(
                "POST", URL, TOKEN, header={"kid": extra}, pad="x" * filler
            )
            sizes[len(proof)] = proof

    check(sizes[MAX_PROOF], key)
    refused_for("at most 8 KiB", sizes[MAX_PROOF + 1], key)


@pytest.mark.parametrize(
    "proof",
    ["junk", "a.b", "a.b.c.d", "é.b.c", b64(b'"alg"') + "." + b64(b"{}") + ".c"],
)
def test_a_proof_that_is_no_jwt_is_refused(proof: str) -> None:
    refused_for("not a well-formed JWT", proof, DPoPKey())


# -- check 2: the header ------------------------------------------------------------------
@pytest.mark.parametrize("typ", [None, "jwt", "at+jwt", 5, "dpop+jwt "])
def test_a_proof_of_another_type_is_refused(typ: object) -> None:
    key = DPoPKey()
    header: dict[str, Any] = {"alg": "ES256", "jwk": key.public}
    if typ is not None:
        header["typ"] = typ

    refused_for("(typ) must be dpop+jwt", signed_with(key.key, header), key)


def test_the_type_is_compared_without_case() -> None:
    key = DPoPKey()
    header = {"typ": "DPoP+JWT", "alg": "ES256", "jwk": key.public}

    check(signed_with(key.key, header), key)


def test_a_header_member_joserfc_does_not_know_is_accepted() -> None:
    """RFC 9449 lets a client add header members; an unknown one is not a fault."""
    key = DPoPKey()
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public, "client": "x"}

    check(signed_with(key.key, header), key)


def test_an_hmac_proof_is_refused_even_keyed_with_the_public_key() -> None:
    key = DPoPKey()
    secret = OctKey.import_key(json.dumps(key.public).encode())
    header = {"typ": "dpop+jwt", "alg": "HS256", "jwk": key.public}

    refused_for("algorithm (alg)", signed_with(secret, header, "HS256"), key)


def test_an_unsigned_proof_is_refused() -> None:
    key = DPoPKey()
    head = b64(
        json.dumps({"typ": "dpop+jwt", "alg": "none", "jwk": key.public}).encode()
    )
    body = b64(json.dumps({"jti": "j", "htm": "POST", "htu": URL}).encode())

    refused_for("algorithm (alg)", f"{head}.{body}.", key)


@pytest.mark.parametrize(
    ("jwk", "words"),
    [
        (None, "carries no public key"),
        ("a key", "carries no public key"),
        ({"kty": "oct", "x": "AAAA"}, "not an RSA, EC or OKP key"),
        ({"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA"}, "not a usable key"),
        ({"kty": "EC", "crv": "T-256", "x": "AAAA", "y": "AAAA"}, "not a usable key"),
        ({"kty": "OKP", "crv": "X9", "x": "AAAA"}, "not a usable key"),
        ({"crv": "P-256"}, "not an RSA, EC or OKP key"),
    ],
)
def test_a_proof_without_a_usable_public_key_is_refused(jwk: Any, words: str) -> None:
    key = DPoPKey()
    header: dict[str, Any] = {"typ": "dpop+jwt", "alg": "ES256"}
    if jwk is not None:
        header["jwk"] = jwk

    refused_for(words, signed_with(key.key, header), key)


@pytest.mark.parametrize("member", ["d", "k", "p"])
def test_a_proof_carrying_a_private_key_is_refused(member: str) -> None:
    key = DPoPKey()
    jwk = {**key.public, member: "AAAA"}
    if member == "d":
        jwk = key.key.as_dict(private=True)
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk}

    refused_for("must be a public key", signed_with(key.key, header), key)


@pytest.mark.parametrize(
    ("private", "alg"),
    [
        (RSAKey.generate_key(2048), "PS256"),
        (OKPKey.generate_key("Ed25519"), "Ed25519"),
        (OKPKey.generate_key("Ed25519"), "EdDSA"),
        (ECKey.generate_key("P-384"), "ES384"),
    ],
    ids=["PS256", "Ed25519", "EdDSA", "ES384"],
)
def test_proofs_of_every_asymmetric_kind_are_accepted(private: Any, alg: str) -> None:
    public = private.as_dict(private=False)
    header = {"typ": "dpop+jwt", "alg": alg, "jwk": public}

    proof = check(
        signed_with(private, header, alg), DPoPKey(), jkt=private.thumbprint()
    )

    assert private.thumbprint() == proof.jkt


# -- check 3: the signature -----------------------------------------------------------------
def test_a_proof_signed_by_another_key_than_its_jwk_is_refused() -> None:
    key, other = DPoPKey(), DPoPKey()
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public}

    refused_for("signature does not verify", signed_with(other.key, header), key)


def test_a_changed_payload_is_refused() -> None:
    key = DPoPKey()
    head, _, signature = key.proof("POST", URL, TOKEN).split(".")
    body = b64(json.dumps({"htm": "GET", "htu": URL, "jti": "j"}).encode())

    refused_for("signature does not verify", f"{head}.{body}.{signature}", key)


@pytest.mark.parametrize("payload", [b"[1]", b'"x"', b"{", b"null"])
def test_a_signed_payload_that_is_no_object_is_refused(payload: bytes) -> None:
    key = DPoPKey()
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public}
    proof = jws.serialize_compact(header, payload, key.key)

    refused_for("signature does not verify", proof, key)


# -- checks 4 to 8: the key, the request, the time, the token, the jti ----------------------
def test_a_proof_by_another_key_than_the_tokens_is_refused() -> None:
    key, stranger = DPoPKey(), DPoPKey()

    refused_for("another key than the token's", stranger.proof("POST", URL, TOKEN), key)


@pytest.mark.parametrize("htm", ["GET", "post", None, 5])
def test_a_proof_of_another_method_is_refused(htm: object) -> None:
    key = DPoPKey()

    refused_for("(htm)", key.proof("POST", URL, TOKEN, htm=htm), key)


@pytest.mark.parametrize(
    "htu",
    [
        "http://127.0.0.1:8000/mcp/",
        "http://127.0.0.1:8001/mcp",
        "https://127.0.0.1:8000/mcp",
        "http://127.0.0.1:8000/MCP",
        "http://127.0.0.2:8000/mcp",
        "https://mcp.example:444/mcp",
        "/mcp",
        "mcp.example/mcp",
        "http://[::1/mcp",
        "http://127.0.0.1:99999/mcp",
        "",
        None,
        5,
    ],
)
def test_a_proof_for_another_url_is_refused(htu: object) -> None:
    key = DPoPKey()

    refused_for("(htu)", key.proof("POST", URL, TOKEN, htu=htu), key)


@pytest.mark.parametrize(
    "htu",
    [
        URL,
        AUDIENCE,
        "http://127.0.0.1:8000/mcp?page=2",
        "http://127.0.0.1:8000/mcp#top",
        "HTTP://127.0.0.1:8000/mcp",
        "https://MCP.example/mcp",
        "https://mcp.example:443/mcp",
    ],
)
def test_the_url_is_compared_as_rfc_3986_normalizes_it(htu: str) -> None:
    key = DPoPKey()

    check(key.proof("POST", URL, TOKEN, htu=htu), key)


def test_a_root_url_matches_with_or_without_its_slash_and_ipv6_hosts_match() -> None:
    key = DPoPKey()
    urls = ("http://[::1]:8000", "http://example.org:80/")

    check(key.proof("POST", URL, TOKEN, htu="http://[::1]:8000/"), key, urls=urls)
    # Without brackets, host [::1] port 8000 and host [::1:8000] would read alike.
    refused_for(
        "(htu)", key.proof("POST", URL, TOKEN, htu="http://[::1:8000]/"), key, urls=urls
    )
    check(key.proof("POST", URL, TOKEN, htu="http://example.org"), key, urls=urls)
    refused_for(
        "(htu)",
        key.proof("POST", URL, TOKEN, htu="http://[::2]:8000/"),
        key,
        urls=urls,
    )


@pytest.mark.parametrize("iat", [None, "now", True, float("nan")])
def test_a_proof_without_a_time_is_refused(iat: object) -> None:
    key = DPoPKey()

    refused_for("no issue time (iat)", key.proof("POST", URL, TOKEN, iat=iat), key)


@pytest.mark.parametrize("offset", [-62, 62])
def test_a_proof_outside_the_leeway_is_refused(offset: int) -> None:
    key = DPoPKey()
    proof = key.proof("POST", URL, TOKEN, iat=int(time.time()) + offset)

    refused_for("too old or from the future (iat)", proof, key, leeway=60.0)


@pytest.mark.parametrize("offset", [-58, 58])
def test_a_proof_inside_the_leeway_is_accepted(offset: int) -> None:
    key = DPoPKey()

    check(
        key.proof("POST", URL, TOKEN, iat=int(time.time()) + offset), key, leeway=60.0
    )


@pytest.mark.parametrize("ath", [None, "", token_hash("another"), 5])
def test_a_proof_for_another_token_is_refused(ath: object) -> None:
    key = DPoPKey()

    refused_for("another access token (ath)", key.proof("POST", URL, ath=ath), key)


@pytest.mark.parametrize("jti", [None, "", 5, "j" * (MAX_JTI + 1)])
def test_a_proof_without_a_usable_jti_is_refused(jti: object) -> None:
    key = DPoPKey()

    refused_for("usable identifier (jti)", key.proof("POST", URL, TOKEN, jti=jti), key)


def test_a_jti_of_the_longest_length_is_accepted() -> None:
    key = DPoPKey()

    assert (
        "j" * MAX_JTI
        == check(key.proof("POST", URL, TOKEN, jti="j" * MAX_JTI), key).jti
    )


# -- the binding ----------------------------------------------------------------------------
def test_the_token_hash_is_unpadded_base64url_of_its_sha_256() -> None:
    from trio_mcp.auth._dpop import token_hash as ours

    tokens = ["t" + str(n) for n in range(200)]

    for token in [*tokens, TOKEN]:
        assert token_hash(token) == ours(token)
        assert 43 == len(ours(token))


def test_a_token_without_cnf_is_unbound_and_a_jkt_binds_it() -> None:
    assert binding_of({"sub": "x"}) is None
    assert "abc" == binding_of({"cnf": {"jkt": "abc"}})


@pytest.mark.parametrize(
    "cnf",
    [
        {"x5t#S256": "abc"},
        {"jkt": "abc", "x5t#S256": "abc"},
        {"jkt": ""},
        {"jkt": 5},
        {},
        "abc",
        None,
    ],
)
def test_a_binding_this_server_cannot_check_is_refused(cnf: object) -> None:
    with pytest.raises(InvalidProof, match="cannot be checked here"):
        binding_of({"cnf": cnf})


# -- BearerAuth.admit with a presentation ---------------------------------------------------
def bound_token(provider: Provider, signing_key: RSAKey, key: DPoPKey) -> str:
    return signed(
        signing_key, {**valid_claims(provider.issuer), "cnf": {"jkt": key.thumbprint}}
    )


def presented(
    proof: str | None, store: MemoryStore | None = None, method: str = "POST"
) -> Presentation:
    return Presentation(method, URL, proof, store or MemoryStore())


async def test_admit_checks_the_proof_of_every_request_even_for_a_cached_token(
    provider: Provider, signing_key: RSAKey
) -> None:
    key = DPoPKey()
    token = bound_token(provider, signing_key, key)
    auth, store = BearerAuth(provider.issuer, AUDIENCE), MemoryStore()
    proof = key.proof("POST", URL, token)

    first = await auth.admit(f"DPoP {token}", presented(proof, store))
    replayed = await auth.admit(f"DPoP {token}", presented(proof, store))
    again = await auth.admit(f"DPoP {token}", presented(key.proof("POST", URL, token)))
    fresh = await auth.admit(
        f"dpop {token}", presented(key.proof("POST", URL, token), store)
    )
    no_proof = await auth.admit(f"DPoP {token}", presented(None, store))
    no_request = await auth.admit(f"DPoP {token}")
    as_bearer = await auth.admit(f"Bearer {token}", presented(proof, store))

    assert isinstance(first, Admission)
    assert isinstance(first.principal, TokenPrincipal)
    assert token == first.principal.token.reveal()  # type: ignore[union-attr]
    assert isinstance(fresh, Admission)
    assert first is again  # the token verified once, remembered; the proof checked
    expected = {
        "replay": (
            replayed,
            "invalid_dpop_proof",
            "the DPoP proof was used before (jti): make a new proof for each request",
        ),
        "no proof": (
            no_proof,
            "invalid_dpop_proof",
            "a DPoP-bound token needs a DPoP proof header",
        ),
        "no request": (
            no_request,
            "invalid_dpop_proof",
            "a DPoP proof cannot be checked on this transport",
        ),
        "bearer": (
            as_bearer,
            "invalid_token",
            "the token is DPoP-bound: send it with the DPoP scheme and a proof",
        ),
    }
    for name, (answer, error, words) in expected.items():
        assert isinstance(answer, Challenge), name
        assert (401, error, "DPoP", DPOP_ALGORITHMS) == (
            answer.status,
            answer.error,
            answer.scheme,
            answer.algs,
        ), name
        assert words == answer.description, name


async def test_a_proof_is_remembered_while_its_iat_is_accepted(
    provider: Provider, signing_key: RSAKey
) -> None:
    key = DPoPKey()
    token = bound_token(provider, signing_key, key)
    auth, store = BearerAuth(provider.issuer, AUDIENCE, dpop_leeway=100), MemoryStore()
    now = int(time.time())
    young = key.proof("POST", URL, token, jti="young", iat=now)
    old = key.proof("POST", URL, token, jti="old", iat=now - 95)

    assert isinstance(
        await auth.admit(f"DPoP {token}", presented(young, store)), Admission
    )
    assert isinstance(
        await auth.admit(f"DPoP {token}", presented(old, store)), Admission
    )

    until = {
        jti: store._claims[Proof(key.thumbprint, jti, 0).replay_key()]
        - trio.current_time()
        for jti in ("young", "old")
    }
    # iat + leeway - now, plus a second: a replay is refused for as long as the
    # proof's iat is accepted, and no longer.
    assert 97 <= until["young"] <= 101
    assert 3 <= until["old"] <= 6


async def test_a_store_that_cannot_record_the_proof_refuses_it(
    provider: Provider, signing_key: RSAKey, caplog: pytest.LogCaptureFixture
) -> None:
    key = DPoPKey()
    token = bound_token(provider, signing_key, key)
    auth, full = BearerAuth(provider.issuer, AUDIENCE), MemoryStore(max_keys=1)
    await full.claim("taken", 600)

    refused = await auth.admit(
        f"DPoP {token}", presented(key.proof("POST", URL, token), full)
    )

    assert isinstance(refused, Challenge)
    assert "invalid_dpop_proof" == refused.error
    assert (
        "the DPoP proof could not be checked for replay; retry with a new one"
        == refused.description
    )
    assert "DPoP: cannot record a proof (ClaimsFull)" in caplog.messages
    assert token not in caplog.text


async def test_unbound_tokens_under_each_mode(
    provider: Provider, signing_key: RSAKey
) -> None:
    token = signed(signing_key, valid_claims(provider.issuer))
    allowed = BearerAuth(provider.issuer, AUDIENCE)
    required = BearerAuth(provider.issuer, AUDIENCE, dpop="required")

    assert isinstance(
        await allowed.admit(f"Bearer {token}", presented(None)), Admission
    )
    # RFC 9110 allows more than one space after the scheme.
    spaced = await allowed.admit(f"Bearer   {token}", presented(None))
    assert isinstance(spaced, Admission)
    answers = {
        "dpop scheme": await allowed.admit(f"DPoP {token}", presented(None)),
        "required": await required.admit(f"Bearer {token}", presented(None)),
    }
    missing = await required.admit(None, presented(None))
    missing_allowed = await allowed.admit(None, presented(None))

    for name, words in [
        ("dpop scheme", "the token is not DPoP-bound: send it with the Bearer scheme"),
        (
            "required",
            "this server accepts only DPoP-bound tokens: request the token with a "
            "DPoP proof and send it with the DPoP scheme",
        ),
    ]:
        answer = answers[name]
        assert isinstance(answer, Challenge), name
        assert ("invalid_token", "DPoP") == (answer.error, answer.scheme), name
        assert words == answer.description, name
    assert isinstance(missing, Challenge)
    assert "authentication required: send a bearer token" == missing.description
    assert (None, "DPoP", DPOP_ALGORITHMS) == (
        missing.error,
        missing.scheme,
        missing.algs,
    )
    assert isinstance(missing_allowed, Challenge)
    assert (None, "Bearer", ()) == (
        missing_allowed.error,
        missing_allowed.scheme,
        missing_allowed.algs,
    )


async def test_a_token_with_a_binding_it_cannot_check_is_an_invalid_token(
    provider: Provider, signing_key: RSAKey
) -> None:
    token = signed(
        signing_key, {**valid_claims(provider.issuer), "cnf": {"x5t#S256": "abc"}}
    )
    auth = BearerAuth(provider.issuer, AUDIENCE)

    refused = await auth.admit(f"Bearer {token}", presented(None))

    assert isinstance(refused, Challenge)
    assert ("invalid_token", "Bearer") == (refused.error, refused.scheme)
    assert "confirmation (cnf)" in refused.description


def test_the_metadata_lists_the_proof_algorithms_and_whether_binding_is_required() -> (
    None
):
    issuer = "https://auth.example"
    allowed = BearerAuth(issuer, AUDIENCE).resource_metadata.document(AUDIENCE)
    required = BearerAuth(issuer, AUDIENCE, dpop="required").resource_metadata

    assert list(DPOP_ALGORITHMS) == allowed["dpop_signing_alg_values_supported"]
    assert "dpop_bound_access_tokens_required" not in allowed
    assert required.document(AUDIENCE)["dpop_bound_access_tokens_required"] is True
    plain = ProtectedResource([issuer]).document(AUDIENCE)
    assert "dpop_signing_alg_values_supported" not in plain


def test_a_dpop_challenge_header_names_the_error_and_the_algorithms() -> None:
    challenge = Challenge(
        401, "invalid_dpop_proof", 'bad "proof"', scheme="DPoP", algs=("ES256", "PS256")
    )

    assert (
        b'DPoP error="invalid_dpop_proof", error_description="bad \\"proof\\"", '
        b'algs="ES256 PS256", resource_metadata="https://m.example/x"'
    ) == challenge.header("https://m.example/x")


@pytest.mark.parametrize(
    "options",
    [
        {"dpop": "sometimes"},
        {"dpop": True},
        {"dpop_leeway": -1},
        {"dpop_leeway": float("nan")},
    ],
)
def test_bad_dpop_options_are_refused_when_written(options: dict[str, Any]) -> None:
    with pytest.raises(McpError.InvalidArgument):
        BearerAuth("https://auth.example", AUDIENCE, **options)


def test_the_principal_never_shows_its_token() -> None:
    from trio_mcp.auth._principal import principal_of

    principal = principal_of({"sub": "s"}, "https://auth.example", "tok-secret-value")
    again = principal_of({"sub": "s"}, "https://auth.example", "another-token")

    assert "tok-secret-value" not in repr(principal)
    assert "tok-secret-value" not in str(principal.token)
    assert principal == again
    assert "tok-secret-value" == principal.token.reveal()  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        pickle.dumps(principal.token)


# -- properties -----------------------------------------------------------------------------
json_values = json_trees(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    max_leaves=6,
)
junk_headers = st.fixed_dictionaries(
    {},
    optional={
        "typ": st.sampled_from(["dpop+jwt", "jwt"]) | json_values,
        "alg": st.sampled_from(["ES256", "none", "HS256", "RS256"]) | json_values,
        "jwk": json_values,
    },
)


@st.composite
def junk_proofs(draw: st.DrawFn) -> str:
    header = b64(json.dumps(draw(junk_headers)).encode())
    payload = b64(json.dumps(draw(json_values)).encode())
    signature = b64(draw(st.binary(max_size=80)))
    return draw(
        st.sampled_from([f"{header}.{payload}.{signature}", f"{header}.{payload}"])
    )


@settings(max_examples=200, deadline=None)
@given(proof=st.text(max_size=300) | junk_proofs())
def test_random_proofs_are_refused_and_never_raise_anything_else(proof: str) -> None:
    key = DPoPKey()

    with pytest.raises(InvalidProof):
        check(proof, key)


#: Seconds from now, away from the leeway's edge (300) so the clock cannot decide.
offsets = st.integers(min_value=-400, max_value=400).filter(
    lambda d: abs(abs(d) - 300) > 5
)
now_ish = offsets.map(lambda d: int(time.time()) + d)
claim_values = {
    "htm": st.sampled_from(["POST", "GET", "post"]) | json_values,
    "htu": st.sampled_from([URL, AUDIENCE, URL + "?q", URL + "/x", "https://x/mcp"])
    | json_values,
    "iat": now_ish | json_values,
    "ath": st.sampled_from([token_hash(TOKEN), token_hash("other")]) | json_values,
    "jti": st.text(max_size=4) | json_values,
}


def oracle(claims: dict[str, Any]) -> bool:
    """Whether RFC 9449 §4.3 accepts these claims (leeway 300, the test's URLs)."""
    iat = claims.get("iat")
    # NaN, infinities and integers no float holds are no time.
    timely = (
        isinstance(iat, int | float)
        and not isinstance(iat, bool)
        and abs(iat) < 1e12
        and abs(time.time() - float(iat)) <= 300
    )
    return (
        claims.get("htm") == "POST"
        and claims.get("htu") in (URL, AUDIENCE, URL + "?q")
        and timely
        and claims.get("ath") == token_hash(TOKEN)
        and isinstance(claims.get("jti"), str)
        and 0 < len(claims["jti"]) <= MAX_JTI
    )


@settings(max_examples=200, deadline=None)
@given(
    changes=st.fixed_dictionaries({}, optional=claim_values),
    dropped=st.sets(st.sampled_from(sorted(claim_values)), max_size=2),
)
def test_signed_proofs_with_any_claims_pass_exactly_when_every_rule_holds(
    changes: dict[str, Any], dropped: set[str]
) -> None:
    key = DPoPKey()
    claims = {
        "jti": "j",
        "htm": "POST",
        "htu": URL,
        "iat": int(time.time()),
        "ath": token_hash(TOKEN),
        **changes,
    }
    for name in dropped - changes.keys():
        del claims[name]
    proof = jwt.encode(
        {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public}, claims, key.key
    )

    try:
        check(proof, key)
    except InvalidProof:
        accepted = False
    else:
        accepted = True

    assert oracle(claims) == accepted, claims


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(position=st.integers(min_value=0), replacement=st.sampled_from("AQgw_-x."))
async def test_a_changed_byte_of_a_good_proof_is_refused_or_reads_the_same(
    provider: Provider, signing_key: RSAKey, position: int, replacement: str
) -> None:
    """Changing one character either breaks the proof or leaves what it decodes to
    unchanged (base64url's spare bits); a changed proof is never admitted."""
    key = DPoPKey()
    token = bound_token(provider, signing_key, key)
    auth = _auth_for(provider)
    proof = key.proof("POST", URL, token)
    at = position % len(proof)
    changed = proof[:at] + replacement + proof[at + 1 :]

    answer = await auth.admit(f"DPoP {token}", presented(changed))

    if isinstance(answer, Admission):
        assert _decoded(changed) == _decoded(proof)
    else:
        assert answer.status == 401
        assert changed not in answer.description


_AUTHS: dict[str, BearerAuth] = {}


def _auth_for(provider: Provider) -> BearerAuth:
    """One BearerAuth for all examples: the keys are fetched once."""
    if provider.issuer not in _AUTHS:
        _AUTHS[provider.issuer] = BearerAuth(provider.issuer, AUDIENCE)
    return _AUTHS[provider.issuer]


def _decoded(proof: str) -> list[bytes]:
    return [
        base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        for part in proof.split(".")
    ]


@pytest.mark.parametrize("value", ["\x80", "\ud800", "é" * 43])
def test_a_hash_or_thumbprint_that_is_not_ascii_is_refused(value: str) -> None:
    """JSON escapes read back as any string, lone surrogates included."""
    key = DPoPKey()
    claims = {"jti": "j", "htm": "POST", "htu": URL, "iat": int(time.time())}
    head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public}
    signing_input = ".".join(
        b64(json.dumps(part).encode()) for part in (head, {**claims, "ath": value})
    )
    signature = jws.JWSRegistry().get_alg("ES256").sign(signing_input.encode(), key.key)

    refused_for("(ath)", f"{signing_input}.{b64(signature)}", key)
    refused_for("another key", key.proof("POST", URL, TOKEN), key, jkt=value)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    proof=st.binary(max_size=300)
    | junk_proofs().map(str.encode)
    | st.sampled_from([b"", b",", b" "]),
    scheme=st.sampled_from([b"DPoP ", b"dpop ", b"Bearer "]),
)
async def test_any_dpop_header_with_a_bound_token_is_a_401_never_a_5xx(
    provider: Provider, signing_key: RSAKey, proof: bytes, scheme: bytes
) -> None:
    token = bound_token(provider, signing_key, DPoPKey())
    status, headers, body = await asgi_post(
        app_for(provider), scheme + token.encode(), (b"dpop", proof)
    )

    assert 401 == status
    assert headers[b"www-authenticate"].startswith(b"DPoP error=")
    assert token.encode() not in body


async def test_a_good_proof_through_the_mounted_app_is_admitted(
    provider: Provider, signing_key: RSAKey
) -> None:
    key = DPoPKey()
    token = bound_token(provider, signing_key, key)
    proof = key.proof("POST", "http://127.0.0.1:8000/mcp", token)

    status, _, body = await asgi_post(
        app_for(provider), f"DPoP {token}".encode(), (b"dpop", proof.encode())
    )

    assert 200 == status, body


def test_an_issuers_key_on_an_unknown_curve_is_left_out_of_its_keys() -> None:
    """joserfc raises KeyError for an unknown ``crv`` (found for proofs above)."""
    from trio_mcp.auth._keys import parse_jwks

    good = DPoPKey().public
    odd = {"kty": "EC", "crv": "T-256", "x": "AAAA", "y": "AAAA", "kid": "odd"}

    assert ["good"] == list(parse_jwks({"keys": [odd, {**good, "kid": "good"}]}))
