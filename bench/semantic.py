"""Semantic mutation operators: the faults a person makes in this code base.

cosmic-ray's operators are syntactic (every comparison operator for every
other, every number plus or minus one, ...).  These are the decisions the
protocols and checkers take, each changed the way a slip changes it:

* ``ComparisonFlip``: a comparison negated (``<`` for ``>=``, ``==`` for
  ``!=``, ``in`` for ``not in``, ``is`` for ``is not``);
* ``BoundaryFlip``: a bound moved by one (``<`` for ``<=``, ``>`` for ``>=``
  and back);
* ``IfToWhile`` / ``WhileToIf``: a test run as a loop (not where the body
  always leaves by ``return`` or ``raise``: it runs once either way), a
  loop run once;
* ``UnionIntersection``: ``|`` for ``&`` (and ``|=``, ``.union`` and back);
* ``AnyAll``: ``any`` for ``all`` and back;
* ``BreakContinue``: ``break`` for ``continue`` and back;
* ``RangeStopUp`` / ``RangeStopDown``: a member range one too long or too
  short (``range(a, b)`` to ``range(a, b + 1)`` or ``range(a, b - 1)``);
* ``SwapArguments``: a call's first two positional arguments swapped
  (not for ``max``, ``min`` and the like, where the order cannot matter,
  nor ``isinstance``, ``getattr`` and the like, which fail at once);
* ``DropGuardReturn``: the ``return`` that ends a guard (an ``if`` without
  ``else`` whose body ends in ``return``) replaced by ``pass``, so the code
  after the guard runs too;
* ``SkipEffect``: a call made for its effect (an expression statement)
  replaced by ``pass``.

Each operator lists its sites in a module (``sites``), numbered in source
order; ``mutate`` rewrites the one site's source span in place, so the rest
of the file, comments included, is unchanged.  Annotations and f-strings are
not mutated (annotations are never evaluated here; f-string parts have no
reliable positions), and a loop whose body breaks out of it is not turned
into an ``if`` (a ``break`` outside a loop does not compile); a mutant that
does not import all the same is judged incompetent by the runner.  Operator names carry the ``semantic/`` prefix, so a mutant's key
(module:operator:occurrence) never collides with cosmic-ray's.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

PREFIX = "semantic/"

_NEGATE = {ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Eq: ast.NotEq,
           ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
# calls whose first two arguments commute or whose swap no code here could mean
_SYMMETRIC = {"max", "min", "print", "set", "frozenset", "zip"}
# calls whose swapped arguments fail at once with a TypeError (no slip a person makes)
_TYPED = {"isinstance", "issubclass", "getattr", "hasattr", "setattr"}


@dataclass(frozen=True)
class Site:
    operator: str       # with the prefix
    start: int          # byte offsets into the UTF-8 source
    end: int
    text: str           # what replaces source[start:end]
    line: int


def _offsets(src: bytes) -> list[int]:
    out, k = [0], 0
    for ln in src.splitlines(keepends=True):
        k += len(ln)
        out.append(k)
    return out


def _skipped(tree: ast.AST) -> set[int]:
    """ids of the nodes inside annotations and f-strings."""
    out: set[int] = set()

    def mark(n):
        if n is not None:
            out.update(id(x) for x in ast.walk(n))
    for n in ast.walk(tree):
        if isinstance(n, ast.arg):
            mark(n.annotation)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(n.returns)
        elif isinstance(n, ast.AnnAssign):
            mark(n.annotation)
        elif isinstance(n, ast.JoinedStr):
            mark(n)
    return out


def _loop_exit_in(body: list[ast.stmt]) -> bool:
    """Whether a break or continue in ``body`` belongs to the loop around it
    (not to a loop or function nested inside)."""
    todo = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            return True
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            todo += n.orelse
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo += [c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt)]
    return False


def _name(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def sites(source: str) -> list[Site]:
    """Every site of every operator in ``source``, in source order."""
    src = source.encode()
    tree = ast.parse(source)
    skip = _skipped(tree)
    base = _offsets(src)
    out: list[Site] = []

    def span(n):
        return base[n.lineno - 1] + n.col_offset, base[n.end_lineno - 1] + n.end_col_offset

    def expr(op, node, new, paren=True):
        a, b = span(node)
        text = ast.unparse(new)
        out.append(Site(PREFIX + op, a, b, f"({text})" if paren else text, node.lineno))

    def stmt(op, node, text):
        a, b = span(node)
        out.append(Site(PREFIX + op, a, b, text, node.lineno))

    for n in ast.walk(tree):
        if id(n) in skip:
            continue
        if isinstance(n, ast.Compare):
            for k, op in enumerate(n.ops):
                for name, table in (("ComparisonFlip", _NEGATE), ("BoundaryFlip", _BOUNDARY)):
                    if type(op) in table:
                        new = copy.deepcopy(n)
                        new.ops[k] = table[type(op)]()
                        expr(name, n, new)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, (ast.BitOr, ast.BitAnd)):
            new = copy.deepcopy(n)
            new.op = ast.BitAnd() if isinstance(n.op, ast.BitOr) else ast.BitOr()
            expr("UnionIntersection", n, new)
        elif isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.BitOr, ast.BitAnd)):
            new = copy.deepcopy(n)
            new.op = ast.BitAnd() if isinstance(n.op, ast.BitOr) else ast.BitOr()
            stmt("UnionIntersection", n, ast.unparse(new))
        elif isinstance(n, ast.Call):
            name = _name(n)
            if isinstance(n.func, ast.Attribute) and name in ("union", "intersection"):
                new = copy.deepcopy(n)
                new.func.attr = "intersection" if name == "union" else "union"
                expr("UnionIntersection", n, new, paren=False)
            if isinstance(n.func, ast.Name) and name in ("any", "all"):
                new = copy.deepcopy(n)
                new.func.id = "all" if name == "any" else "any"
                expr("AnyAll", n, new, paren=False)
            if (isinstance(n.func, ast.Name) and name == "range" and 1 <= len(n.args) <= 3
                    and not any(isinstance(x, ast.Starred) for x in n.args)):
                k = 0 if len(n.args) == 1 else 1
                for op, delta in (("RangeStopUp", ast.Add()), ("RangeStopDown", ast.Sub())):
                    new = copy.deepcopy(n)
                    new.args[k] = ast.BinOp(new.args[k], delta, ast.Constant(1))
                    expr(op, n, new, paren=False)
            pos = [x for x in n.args[:2] if not isinstance(x, ast.Starred)]
            if (len(pos) == 2 and len(n.args) >= 2 and name not in _SYMMETRIC | _TYPED
                    and ast.dump(pos[0]) != ast.dump(pos[1])):
                new = copy.deepcopy(n)
                new.args[0], new.args[1] = new.args[1], new.args[0]
                expr("SwapArguments", n, new, paren=False)
        elif isinstance(n, ast.If):
            a, _ = span(n)
            # a body that always leaves (return, raise) runs once either way: equivalent, not listed
            if (src[a:a + 3] in (b"if ", b"if(") and not isinstance(n.body[-1], (ast.Return, ast.Raise))):
                out.append(Site(PREFIX + "IfToWhile", a, a + 2, "while", n.lineno))
            if not n.orelse and isinstance(n.body[-1], ast.Return):
                stmt("DropGuardReturn", n.body[-1], "pass")
        elif isinstance(n, ast.While):
            a, _ = span(n)
            if not _loop_exit_in(n.body) and src[a:a + 5] == b"while":
                out.append(Site(PREFIX + "WhileToIf", a, a + 5, "if", n.lineno))
        elif isinstance(n, ast.Break):
            stmt("BreakContinue", n, "continue")
        elif isinstance(n, ast.Continue):
            stmt("BreakContinue", n, "break")
        elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and id(n.value) not in skip:
            stmt("SkipEffect", n, "pass")
    out.sort(key=lambda s: (s.start, s.operator, s.end, s.text))
    return out


def apply(source: str, site: Site) -> str:
    src = source.encode()
    return (src[:site.start] + site.text.encode() + src[site.end:]).decode()


def listing(source: str) -> list[tuple[str, int, int]]:
    """(operator, occurrence, line) of every site: the n-th site of an
    operator in source order is its occurrence n."""
    seen: dict[str, int] = {}
    out = []
    for s in sites(source):
        k = seen.get(s.operator, 0)
        seen[s.operator] = k + 1
        out.append((s.operator, k, s.line))
    return out


def mutate(source: str, operator: str, occurrence: int) -> str | None:
    """The source with the ``occurrence``-th site of ``operator`` mutated
    (None when there is no such site)."""
    ss = [s for s in sites(source) if s.operator == operator]
    return apply(source, ss[occurrence]) if occurrence < len(ss) else None
