"""Which ssh keys speak for which address: the allowed-signers record under `$NEO_HOME/keys`.

The record is an ordinary ssh allowed-signers file (`ssh-keygen(1)`, "ALLOWED SIGNERS"), one
key a line: `alice@example.com namespaces="git" ssh-ed25519 AAAA…`. git-neo writes the person's
own key there when it makes it (`store/signing_key.py`), and every key given with
`git neo trust add EMAIL --key …` (a teammate's, or the person's own key from another machine).
It belongs to the person, not to one repository: a key names who holds it everywhere; whether
that person's commits carry authority is still each repository's trust list (`store/trust.py`).
The same file can be handed to git (`gpg.ssh.allowedSignersFile`) to check the commits by hand.

Keys are compared by their SHA256 fingerprint, the form `ssh-keygen -l` and git's `%GF` print.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from neo_git.errors import NeoError
from neo_git.store.file_memo import FileMemo

KEY_FOLDER = "keys"                 # under NEO_HOME
ALLOWED_SIGNERS = "allowed_signers"
# Key types ssh-keygen signs with (`ssh-keygen -Y sign`): plain and security-key (sk-) ones.
_KEY_TYPE = re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|"
                       r"sk-ecdsa-sha2-nistp256@openssh\.com)$")
MAX_RECORD_BYTES = 1 << 20          # a person's keys, not a key server
# {fingerprint: addresses} per record file, read again when it changes: trust asks on every recall
_MEMO: FileMemo[Mapping[str, frozenset[str]]] = FileMemo(MappingProxyType({}))


def keys_dir(home: Path | None = None) -> Path:
    """`$NEO_HOME/keys`: the person's signing key and the allowed-signers record."""
    from neo_git.identity import neo_home

    return (neo_home() if home is None else Path(home)) / KEY_FOLDER


def allowed_signers_path(home: Path | None = None) -> Path:
    """The allowed-signers record (it may not exist yet)."""
    return keys_dir(home) / ALLOWED_SIGNERS


def parse_public_key(text: str) -> tuple[str, str]:
    """(key type, base64 blob) of an OpenSSH public key line (`ssh-ed25519 AAAA… comment`);
    ValueError when it is not one. The blob must decode and name the same type."""
    fields = (text or "").strip().split()
    if len(fields) < 2 or not _KEY_TYPE.match(fields[0]):
        raise ValueError("not an ssh public key (expected e.g. `ssh-ed25519 AAAA… comment`)")
    kind, blob = fields[0], fields[1]
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the key's base64 does not decode") from None
    # The blob starts with its own type as an ssh string (uint32 length + name).
    if len(raw) < 4 or raw[4:4 + int.from_bytes(raw[:4], "big")] != kind.encode("ascii"):
        raise ValueError("the key's type and its data disagree")
    return kind, blob


def fingerprint(public_key: str) -> str:
    """`SHA256:…` of an OpenSSH public key line (as `ssh-keygen -l` and git's `%GF` print it);
    "" when it is not a key."""
    try:
        _kind, blob = parse_public_key(public_key)
    except ValueError:
        return ""
    digest = hashlib.sha256(base64.b64decode(blob)).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def read_public_key(path: Path) -> str:
    """`type base64` from a public key file (NeoError when unreadable or not a key)."""
    try:
        data = Path(path).read_bytes()[:16384]
        kind, blob = parse_public_key(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise NeoError(f"could not read an ssh public key from {path}: {exc}",
                       "pass the `.pub` file, or the key itself: `ssh-ed25519 AAAA…`") from None
    return f"{kind} {blob}"


def _line_entry(line: str) -> tuple[list[str], str] | None:
    """(addresses, fingerprint) of one allowed-signers line git-neo can use; None for comments,
    certificate authorities, time-limited keys and keys for other namespaces (ssh would honour
    those options; this reader does not, so it leaves them to git)."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    fields = text.split()
    at = next((i for i, f in enumerate(fields) if _KEY_TYPE.match(f)), None)
    if at is None or at == 0 or at + 1 >= len(fields):
        return None
    options = " ".join(fields[1:at]).lower()
    if options and not re.fullmatch(r'namespaces="[^"]*"', options):
        return None
    if options and "git" not in re.findall(r"[^\",=]+", options.split("=", 1)[1]):
        return None
    key = fingerprint(f"{fields[at]} {fields[at + 1]}")
    addresses = [a.strip().lower() for a in fields[0].split(",") if "@" in a and "*" not in a and "?" not in a]
    return (addresses, key) if key and addresses else None


def bound_keys(home: Path | None = None) -> Mapping[str, frozenset[str]]:
    """{fingerprint: addresses it speaks for} from the allowed-signers record ({} without one).
    The same dict while the file is unchanged (trust memoises on it)."""
    return _MEMO.get(allowed_signers_path(home), _read_bound_keys)


def _read_bound_keys(path: Path) -> Mapping[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    text = path.read_bytes()[:MAX_RECORD_BYTES].decode("utf-8", errors="replace")
    for line in text.splitlines():
        entry = _line_entry(line)
        if entry is not None:
            out.setdefault(entry[1], set()).update(entry[0])
    return {key: frozenset(addresses) for key, addresses in out.items()}


def bind(address: str, public_key: str, home: Path | None = None) -> bool:
    """Add `address namespaces="git" <key>` to the record (under its lock, atomically); False when
    that key already speaks for that address."""
    from neo_git.fileio import atomic_write, locked

    kind, blob = parse_public_key(public_key)
    key = fingerprint(public_key)
    path = allowed_signers_path(home)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with locked(path.parent / ".allowed_signers.lock", timeout=5.0):
        try:
            current = path.read_bytes().decode("utf-8", errors="replace")
        except FileNotFoundError:
            current = ""
        for line in current.splitlines():
            entry = _line_entry(line)
            if entry is not None and entry[1] == key and address in entry[0]:
                return False
        text = current + ("" if not current or current.endswith("\n") else "\n")
        text += f'{address} namespaces="git" {kind} {blob}\n'
        atomic_write(path, text.encode("utf-8"))
    _MEMO.forget(path)
    return True


def signer_email(principal: str) -> str:
    """The address in git's signer name: an ssh principal (`alice@example.com`) or a gpg
    user id (`Alice <alice@example.com>`); lower case, "" when none."""
    text = (principal or "").strip()
    if "<" in text and text.endswith(">"):
        text = text[text.rindex("<") + 1:-1]
    return text.strip().lower() if "@" in text else ""
