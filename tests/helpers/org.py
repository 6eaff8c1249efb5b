"""Two machines of one organisation: each its own NEO_HOME and repository (origin under
github.com/acme/…, never contacted), and one bare org remote they share."""
from __future__ import annotations

from pathlib import Path

from tests.helpers.git import git

PEOPLE = {"alice": ("Alice Example", "alice@example.com"), "bob": ("Bob Example", "bob@example.com")}


class Org:
    """A bare org remote and, per person, a home (NEO_HOME) and a repository of org acme."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.remote = root / "org-memory.git"
        git(root, "init", "-q", "--bare", "-b", "main", str(self.remote))

    def machine(self, who: str, repo_name: str | None = None) -> Path:
        """*who*'s repository (created on first use) in org acme; their NEO_HOME is home(who)."""
        repo = self.root / who / (repo_name or f"{who}-service")
        if not repo.exists():
            repo.mkdir(parents=True)
            git(repo, "init", "-q", "-b", "main")
            git(repo, "remote", "add", "origin", f"https://github.com/acme/{repo.name}.git")
            name, email = PEOPLE[who]
            git(repo, "config", "user.name", name)
            git(repo, "config", "user.email", email)
            git(repo, "commit", "-q", "--allow-empty", "-m", "initial")
        return repo

    def home(self, who: str) -> Path:
        """*who*'s NEO_HOME."""
        return self.root / who / "neo-home"

    def store(self, who: str, repo_name: str | None = None):
        """A FactStore on *who*'s repository with *who*'s NEO_HOME (hash embedder)."""
        from neo_git import identity
        from neo_git.store import FactStore

        return FactStore(identity.open_repository(self.machine(who, repo_name)), embedder="hash",
                         home=self.home(who))

    def connect(self, who: str, trust_remote: bool = False):
        """`git neo org connect <remote>` for *who*; with *trust_remote* their org memory then
        trusts the remote's unsigned commits (`neo.trustUnsigned origin`), as a team whose org
        repository only its members can push to would set it."""
        from neo_git.org import connect

        report = connect(self.store(who), str(self.remote))
        if trust_remote:
            git(self.memory(who).parent, f"--git-dir={self.memory(who)}", "config", "neo.trustUnsigned", "origin")
        return report

    def sync(self, who: str):
        """`git neo org sync` for *who*; the report."""
        from neo_git.org import sync_org

        return sync_org(self.store(who))

    def memory(self, who: str) -> Path:
        """*who*'s org memory (the bare repository under their NEO_HOME)."""
        return self.home(who) / "org" / "acme.git"


def org_tree(git_dir: Path) -> str:
    """The tree id of refs/neo/facts in a bare repository ("" while it has none)."""
    return git(git_dir.parent, f"--git-dir={git_dir}", "rev-parse", "--verify", "--quiet",
               "refs/neo/facts^{tree}", check=False).strip()


def org_ids(store, include_invalid: bool = True) -> set[str]:
    """Ids of the org facts a store sees."""
    return {f.id for f in store.list(scope="org", include_invalid=include_invalid)}
