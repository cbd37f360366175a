#!/usr/bin/python3
"""Keep docs true: every error id defined in include/zarrxt/error.hpp has a row in docs/errors.md,
and every codec the library registers has a row in docs/status.md."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
# The error codes: error.hpp's, and the MPI layer's own (zarrxt/mpi.hpp, optional).
header = (root / "include/zarrxt/error.hpp").read_text() + (root / "include/zarrxt/mpi.hpp").read_text()
errors_md = (root / "docs/errors.md").read_text()
status_md = (root / "docs/status.md").read_text()
registry = (root / "include/zarrxt/codec/registry.hpp").read_text()

problems = []
for category, body in re.findall(r"enum class (\w+)_errc : int\s*\{(.*?)\};", header, re.S):
    category = {"limit": "limit"}.get(category, category)
    for name, number in re.findall(r"(\w+) = (\d+)", body):
        ident = f"zarrxt.{category}.{number}"
        if not re.search(rf"\|\s*{re.escape(ident)}\s*\|\s*{name}\s*\|", errors_md):
            problems.append(f"docs/errors.md has no row for {ident} ({name})")

builtin = re.search(r"using builtin_codecs\s*=\s*codec_list<(.*?)>;", registry, re.S).group(1)
# Every codec type in the registry list appears in the status table under its Zarr name.
names = set()
for token in re.split(r",\s*(?![^<]*>)", builtin):
    token = token.strip()
    base = token.split("<")[0]
    names.add(base.replace("numcodecs::", "numcodecs."))
for name in sorted(names):
    if f"`{name}`" not in status_md:
        problems.append(f"docs/status.md does not mention codec `{name}`")

for p in problems:
    print(p)
print("docs ok" if not problems else f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
