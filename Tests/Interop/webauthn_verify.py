#!/usr/bin/env python3
"""Verify raxx-auth's software authenticator output with a standard relying-party library.

Usage: webauthn_verify.py REGISTRATION.json AUTHENTICATION.json [RP_ID ORIGIN]

The files hold a RegistrationResponseJSON and an AuthenticationResponseJSON exactly as the client
sent them. py_webauthn (PyPI: webauthn) verifies both as-is; the script prints one JSON line and
exits 0, or prints the library's complaint and exits 1.
"""
import json
import sys

from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import base64url_to_bytes


def challenge(credential):
    client_data = json.loads(base64url_to_bytes(credential["response"]["clientDataJSON"]))
    return base64url_to_bytes(client_data["challenge"])


def main():
    registration = json.load(open(sys.argv[1]))
    authentication = json.load(open(sys.argv[2]))
    rp_id = sys.argv[3] if len(sys.argv) > 3 else "raxx.app"
    origin = sys.argv[4] if len(sys.argv) > 4 else "https://raxx.app"
    try:
        r = verify_registration_response(credential=registration, expected_challenge=challenge(registration),
                                         expected_origin=origin, expected_rp_id=rp_id, require_user_verification=True)
        a = verify_authentication_response(credential=authentication, expected_challenge=challenge(authentication),
                                           expected_origin=origin, expected_rp_id=rp_id,
                                           credential_public_key=r.credential_public_key,
                                           credential_current_sign_count=r.sign_count, require_user_verification=True)
    except Exception as error:  # the library's own words are the point
        print(f"refused: {type(error).__name__}: {error}")
        return 1
    print(json.dumps({"registration": "verified", "fmt": r.fmt, "authentication": "verified",
                      "new_sign_count": a.new_sign_count, "user_verified": a.user_verified}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
