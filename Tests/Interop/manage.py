#!/usr/bin/env python3
"""Django's command-line entry point for the interop server (see start-server.sh)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interop_server.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
