#!/usr/bin/python3
"""Keep docs true: every error id defined in include/zarrxt/error.hpp has a row in docs/errors.md,
every codec the library registers has a row in docs/status.md, every command of the zarrxt tool has
a section in docs/tool.md, and the version is the same in meson.build, config.hpp's macros and the
first heading of CHANGELOG.md."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
# The error codes: error.hpp's, the MPI layer's own (zarrxt/mpi.hpp, optional) and the C API's
# (tools/zarrxt_c.cpp).
header = (root / "include/zarrxt/error.hpp").read_text() + (root / "include/zarrxt/mpi.hpp").read_text() + \
    (root / "tools/zarrxt_c.cpp").read_text()
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

# The tool's commands (its `commands[]` table) each have a section in docs/tool.md.
tool = (root / "tools/zarrxt.cpp").read_text()
tool_md = (root / "docs/tool.md").read_text()
table = re.search(r"const command commands\[\] = \{(.*?)\n\};", tool, re.S).group(1)
for name in re.findall(r'^\s*\{"(\w+)",', table, re.M):
    if name != "help" and f"## zarrxt {name}\n" not in tool_md:
        problems.append(f"docs/tool.md has no section '## zarrxt {name}'")

# One version everywhere.
meson_version = re.search(r"project\('zarrxt'.*?version:\s*'([^']+)'", (root / "meson.build").read_text(), re.S).group(1)
config = (root / "include/zarrxt/config.hpp").read_text()
macro = {k: re.search(rf"#define ZARRXT_VERSION_{k} (\S+)", config).group(1) for k in ("MAJOR", "MINOR", "PATCH", "STRING")}
if "%s.%s.%s" % (macro["MAJOR"], macro["MINOR"], macro["PATCH"]) != meson_version:
    problems.append(f"config.hpp's ZARRXT_VERSION_MAJOR/MINOR/PATCH are not meson.build's version {meson_version}")
if macro["STRING"] != f'"{meson_version}"':
    problems.append(f"config.hpp's ZARRXT_VERSION_STRING is {macro['STRING']}, meson.build says {meson_version}")
heading = re.search(r"^## (\S+)", (root / "CHANGELOG.md").read_text(), re.M)
if not heading or heading.group(1) != meson_version:
    problems.append(f"CHANGELOG.md's first version heading is not {meson_version}")

# Relative links in the docs lead somewhere.
pages = sorted((root / "docs").rglob("*.md")) + [root / "README.md", root / "CHANGELOG.md", root / "bench/README.md"]
for page in pages:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
        if "://" not in target and not (page.parent / target).exists():
            problems.append(f"{page.relative_to(root)} links to {target}, which does not exist")

# The benchmark record docs/benchmarks.md cites comes with its charts, linked beside it (the
# main suite's records; the remote, MPI, compile-cost and fresh-result records have no charts).
bench_md = (root / "docs/benchmarks.md").read_text()
for record in sorted(set(re.findall(r"\(\.\./bench/records/([^)/]+)\.md\)", bench_md))):
    if re.search(r"-(remote|mpi|compile|fresh)$", record):
        continue
    for chart in ("w1", "w2"):
        if f"../bench/records/{record}-{chart}.svg" not in bench_md:
            problems.append(f"docs/benchmarks.md does not link the {chart} chart of record {record}")

for p in problems:
    print(p)
print("docs ok" if not problems else f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
