#!/usr/bin/env python3
"""many_params.py: the C functions (definitions, and the function-pointer hooks of structs) that
take many parameters, most first. A long list of loose parameters is where a struct that names
them belongs; the model's hot path (model/) keeps none over 8 except the BLAS-shaped kernels.

    python3 tests/many_params.py [--min=N] [DIR ...]     (default: N 9, the whole tree)

It reads the files as text (comments and strings blanked, brace depth 0 for definitions): a tool
for planning, not a compiler."""
import re, sys, os

def strip(src):
    src = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), src, flags=re.S)
    src = re.sub(r'//[^\n]*', '', src)
    src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\])*'", "''", src)
    return src

def params_of(text):
    depth, n = 0, 0
    if text.strip() in ('', 'void'): return 0
    for ch in text:
        if ch in '([{': depth += 1
        elif ch in ')]}': depth -= 1
        elif ch == ',' and depth == 0: n += 1
    return n + 1

def scan(path):
    src = strip(open(path, encoding='utf-8', errors='replace').read())
    out = []
    # definitions: NAME ( ... ) {   at brace depth 0
    n = len(src)
    pat = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
    pos = 0
    while True:
        m = pat.search(src, pos)
        if not m: break
        start = m.start()
        pos = m.end()
        # find matching paren
        j, d = m.end(), 1
        while j < n and d:
            if src[j] == '(': d += 1
            elif src[j] == ')': d -= 1
            j += 1
        k = j
        while k < n and src[k] in ' \t\n': k += 1
        # skip attributes
        if src.startswith('__attribute__', k):
            continue
        name = m.group(1)
        if name in ('if', 'for', 'while', 'switch', 'return', 'sizeof', 'defined', '__attribute__', '__typeof__'):
            continue
        if k < n and src[k] == '{':
            # a definition only at brace depth 0
            bd = src.count('{', 0, start) - src.count('}', 0, start)
            if bd == 0:
                out.append((name, params_of(src[m.end():j - 1]), src.count('\n', 0, start) + 1, 'def'))
    # function-pointer members: (*name)(...)
    for m in re.finditer(r'\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(', src):
        j, d = m.end(), 1
        while j < n and d:
            if src[j] == '(': d += 1
            elif src[j] == ')': d -= 1
            j += 1
        out.append((m.group(1), params_of(src[m.end():j - 1]), src.count('\n', 0, m.start()) + 1, 'hook'))
    return out

def main():
    args = sys.argv[1:]
    least = 9
    if args and args[0].startswith('--min='):
        least = int(args[0][6:]); args = args[1:]
    roots = args or ['.']
    rows = []
    for root in roots:
        for dp, dn, fn in os.walk(root):
            dn[:] = [d for d in dn if d not in ('build', '.git') and not d.startswith('build')]
            for f in fn:
                if f.endswith(('.c', '.h')):
                    p = os.path.join(dp, f)
                    for name, k, line, kind in scan(p):
                        if k >= least: rows.append((k, p, line, name, kind))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    for k, p, line, name, kind in rows:
        print(f'{k:3d} {p.lstrip("./")}:{line} {name}{" (hook)" if kind == "hook" else ""}')
    print(f'{len(rows)} functions with >= {least} parameters')
main()
