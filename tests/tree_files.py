"""tree_files.py - the tree's files as layout_check.py and
layering_check.py read them: what git tracks, with the files git would
add (in a git checkout whose top is the source directory), else every
file under it but the autotools' own folders (build-aux, autom4te.cache)
and build trees (a folder holding config.status, or named _*, as make
distcheck's are)."""
import os
import subprocess

in_git = False  # set by tree_files: the files came from git


def tree_files(SRC):
    """The tree's files, as paths relative to SRC."""
    global in_git
    try:
        top = subprocess.run(["git", "-C", SRC, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if os.path.realpath(top) == os.path.realpath(SRC):
            out = subprocess.run(["git", "-C", SRC, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                 capture_output=True, check=True).stdout
            files = [f for f in out.decode("utf-8", "surrogateescape").split("\0") if f]
            in_git = True
            # deleted in the working tree but not yet from the index: gone
            return sorted(f for f in files if os.path.lexists(os.path.join(SRC, f)))
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for dirpath, dirnames, filenames in os.walk(SRC):
        rel = os.path.relpath(dirpath, SRC)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in ("build-aux", "autom4te.cache") and not d.startswith("_")
                           and not os.path.exists(os.path.join(SRC, d, "config.status"))]
        dirnames[:] = [d for d in dirnames if d not in (".deps", ".git")]
        files += [os.path.normpath(os.path.join(rel, f)) for f in filenames]
    return sorted(files)
