"""The Python package's knobs: XRDMA_* variables read by this package only,
with their defaults and meanings (the C layers' tables are listed by
`xrdma_info -c`; these are documented in xrdma_info(1) and docs/guide/6-tuning.md)."""
import os

KNOBS = {
    "XRDMA_PY_CACHE": (
        "",
        "Where a function written in Python is kept once compiled, so that the ranks of a node (of a job, on a "
        "shared file system) compile it once and the others read it: a directory; empty: "
        "$XDG_CACHE_HOME/xrdma/python, else ~/.cache/xrdma/python; off: every process compiles its own copy."),
}


def get(name):
    """The value of knob @p name (its default when the environment has none);
    a name no table has raises KeyError."""
    default = KNOBS[name][0]
    return os.environ.get(name, default)
