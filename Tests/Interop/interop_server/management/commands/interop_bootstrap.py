"""Creates the interop fixtures and writes one JSON line describing them.

One application per grant type (DOT binds each application to a single grant),
all signing ID tokens with RS256 (DOT cannot refresh an OIDC token for an
application without an algorithm). Client ids are fixed; the one secret is
random per run and appears only in the JSON handed to the test.
"""
import json
import os
import secrets
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from oauth2_provider.models import get_application_model

# Two people, so tests can hold two accounts of one provider at once; the first
# is also described as "username"/"password" for the tests written before the second.
USERS = [
    {"username": "alice", "password": "wonderland-Interop1", "email": "alice@example.com"},
    {"username": "bob", "password": "builder-Interop2", "email": "bob@example.com"},
]


class Command(BaseCommand):
    help = "Create the interop user and applications and describe them as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", required=True)
        parser.add_argument("--output", default="-", help="file to write the JSON line to; - for stdout")

    def handle(self, *args, base_url, output, **options):
        Application = get_application_model()
        users = [get_user_model().objects.create_user(u["username"], email=u["email"], password=u["password"]) for u in USERS]
        user = users[0]

        def application(client_id, grant, client_type, secret="", redirect_uris=""):
            app = Application(
                client_id=client_id,
                name=client_id,
                user=user,
                client_type=client_type,
                authorization_grant_type=grant,
                redirect_uris=redirect_uris,
                algorithm=Application.RS256_ALGORITHM,
                skip_authorization=False,
            )
            # Public clients authenticate by client_id alone; their secret stays blank.
            app.client_secret = secret
            app.save()
            return app

        confidential_secret = secrets.token_urlsafe(32)
        application("auth-agent-password", Application.GRANT_PASSWORD, Application.CLIENT_PUBLIC)
        application("auth-agent-service", Application.GRANT_CLIENT_CREDENTIALS, Application.CLIENT_CONFIDENTIAL,
                    secret=confidential_secret)
        # DOT 3.x follows RFC 8252 §7.3: a registered http://127.0.0.1 or http://[::1]
        # redirect URI matches any port, but the path must match exactly.
        application("auth-agent-code", Application.GRANT_AUTHORIZATION_CODE, Application.CLIENT_PUBLIC,
                    redirect_uris="http://127.0.0.1/callback http://[::1]/callback")
        application("auth-agent-device", Application.GRANT_DEVICE_CODE, Application.CLIENT_PUBLIC)

        o = base_url.rstrip("/") + "/o"
        description = {
            "baseUrl": base_url,
            "issuer": o,
            "discoveryUrl": o + "/.well-known/openid-configuration",
            "authorizationEndpoint": o + "/authorize/",
            "tokenEndpoint": o + "/token/",
            "revocationEndpoint": o + "/revoke_token/",
            "introspectionEndpoint": o + "/introspect/",
            "userinfoEndpoint": o + "/userinfo/",
            "deviceAuthorizationEndpoint": o + "/device-authorization/",
            "loginUrl": base_url.rstrip("/") + "/accounts/login/",
            "username": USERS[0]["username"],
            "password": USERS[0]["password"],
            "users": [{"username": u["username"], "password": u["password"]} for u in USERS],
            "clients": {
                "password": {"clientId": "auth-agent-password"},
                "clientCredentials": {"clientId": "auth-agent-service", "clientSecret": confidential_secret},
                "authorizationCode": {"clientId": "auth-agent-code", "redirectPath": "/callback"},
                "deviceCode": {"clientId": "auth-agent-device"},
            },
        }
        line = json.dumps(description, sort_keys=True) + "\n"
        if output == "-":
            sys.stdout.write(line)
            sys.stdout.flush()
        else:
            # 0600: the line carries the confidential client's secret.
            fd = os.open(output + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(line)
            os.replace(output + ".tmp", output)
