"""The per-user key git-neo signs facts commits with when git's own signing is not set up.

Teammates (and the person's other clones) trust a commit by a signature git verifies, never by
the address it claims; asking everyone to set up commit signing made "verified" the exception.
So git-neo makes one ed25519 key per person, once, with `ssh-keygen`: `$NEO_HOME/keys/
signing_ed25519` (mode 0600, folder 0700, no passphrase: it signs unattended, from hooks, and
only commits on the facts ref), and writes its public half under the person's address into the
allowed-signers record beside it (`store/keyring.py`). Every clone that shares that home then
knows the key as the person's.

A commit is signed the way git signs with `gpg.format=ssh`: `ssh-keygen -Y sign -n git` over
the commit's bytes, stored in its `gpgsig` header, so `git verify-commit` and `git log --format=%G?`
check it. A failure here (no ssh-keygen, an unreadable or damaged key) is `SigningFailed`; the
caller writes the commit unsigned (`store/signing.py`): signing must never cost a write.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from neo_git.store.keyring import bind, fingerprint, keys_dir, parse_public_key

KEY_NAME = "signing_ed25519"
SSH_KEYGEN = "ssh-keygen"
TIMEOUT = 10.0      # seconds per ssh-keygen call; a healthy one takes a few milliseconds


class SigningFailed(Exception):
    """The key could not be made or used (the reason is the message)."""


def key_path(home: Path | None = None) -> Path:
    """The private key's path (it may not exist yet)."""
    return keys_dir(home) / KEY_NAME


def own_public_key(home: Path | None = None) -> str:
    """`ssh-ed25519 AAAA…` of the person's key, "" when there is none (or it is unreadable)."""
    try:
        kind, blob = parse_public_key(key_path(home).with_suffix(".pub").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    return f"{kind} {blob}"


def own_fingerprint(home: Path | None = None) -> str:
    """The fingerprint of the person's key ("" when there is none)."""
    public = own_public_key(home)
    return fingerprint(public) if public else ""


def ensure_key(address: str, home: Path | None = None) -> Path:
    """The private key's path, made now if this person has none (under a lock: two first writes
    at once make one key). Its public half is bound to *address* in the allowed-signers record."""
    from neo_git.errors import NeoError
    from neo_git.fileio import locked

    path = key_path(home)
    if path.exists() and own_public_key(home):
        return path
    folder = path.parent
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with locked(folder / ".key.lock", timeout=5.0):
            if not path.exists():
                _generate(path, address)
            elif not own_public_key(home):
                # The public half is how the person's clones know the key: derived again from
                # the private one (which fails, and so signs nothing, if that is damaged too).
                public = _ssh_keygen(["-y", "-f", str(path)]).strip()
                from neo_git.fileio import atomic_write

                atomic_write(path.with_suffix(".pub"), (public + "\n").encode("ascii"))
            public = own_public_key(home)
            if not public:
                raise SigningFailed(f"{path}.pub is missing or not a public key")
            bind(address, public, home)
    except (OSError, NeoError, ValueError) as exc:
        raise SigningFailed(f"could not make the key in {folder}: {exc}") from None
    return path


def _generate(path: Path, address: str) -> None:
    """`ssh-keygen -t ed25519` into a temporary folder beside *path*, then moved into place
    (the public half first: a private key without its public half is never seen)."""
    work = Path(tempfile.mkdtemp(prefix=".new-key.", dir=path.parent))
    try:
        made = work / KEY_NAME
        _ssh_keygen(["-q", "-t", "ed25519", "-N", "", "-C", f"git-neo {address}", "-f", str(made)])
        os.chmod(made, 0o600)
        os.replace(made.with_suffix(".pub"), path.with_suffix(".pub"))
        os.replace(made, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def sign(buffer: bytes, key: Path) -> str:
    """The armored ssh signature (`-----BEGIN SSH SIGNATURE-----` …, no trailing newline) of
    *buffer* in git's namespace, made with the private key at *key*."""
    return _ssh_keygen(["-Y", "sign", "-n", "git", "-f", str(key)], data=buffer).strip()


def _ssh_keygen(args: list[str], data: bytes | None = None) -> str:
    # A new session has no controlling terminal, and SSH_ASKPASS_REQUIRE=never forbids a helper:
    # a key someone replaced with a passphrase-protected one fails at once instead of asking.
    env = {**os.environ, "SSH_ASKPASS_REQUIRE": "never", "DISPLAY": ""}
    try:
        proc = subprocess.run([SSH_KEYGEN, *args], input=data if data is not None else b"",
                              capture_output=True, timeout=TIMEOUT, env=env, start_new_session=True)
    except FileNotFoundError:
        raise SigningFailed("ssh-keygen was not found (install OpenSSH's client tools)") from None
    except subprocess.TimeoutExpired:
        raise SigningFailed(f"ssh-keygen took longer than {TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise SigningFailed(f"ssh-keygen could not run: {exc}") from None
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise SigningFailed(f"ssh-keygen: {lines[-1] if lines else f'exit status {proc.returncode}'}")
    return proc.stdout.decode("ascii", errors="replace")
