"""A cheap password hasher for the throwaway interop server.

Django's default PBKDF2 work factor (a million iterations) costs most of a second
per check on a small machine, and DOT checks a hashed client secret on every
confidential-client request. The server lives for one test run on loopback with
fixture credentials, so speed matters more than resistance to offline cracking.
"""
from django.contrib.auth.hashers import PBKDF2PasswordHasher


class FastPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1000
