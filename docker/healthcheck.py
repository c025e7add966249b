#!/usr/bin/env python3
"""Container health probe (stdlib only): exit 0 when URL answers with a 2xx status.

Usage: kionga-healthcheck URL [--bearer-env NAME]

With --bearer-env the probe sends `Authorization: Bearer <token>`, the token read
from $NAME (or from the file named by $NAME_FILE, like the services read it), so
the token is never written into the image or into the healthcheck command line.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path


def token_from_env(name: str) -> str:
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        return Path(file_name).read_text(encoding="utf-8").rstrip("\r\n")
    return os.environ.get(name, "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kionga-healthcheck")
    parser.add_argument("url")
    parser.add_argument("--bearer-env", metavar="NAME")
    parser.add_argument("--timeout", type=float, default=4.0)
    args = parser.parse_args(argv)
    request = urllib.request.Request(args.url)
    if args.bearer_env:
        request.add_header("Authorization", f"Bearer {token_from_env(args.bearer_env)}")
    try:
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (OSError, ValueError) as exc:
        print(f"unhealthy: {args.url}: {exc}", file=sys.stderr)
        return 1
    if 200 <= status < 300:
        return 0
    print(f"unhealthy: {args.url} answered {status}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
