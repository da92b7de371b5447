"""The class an annotation or a type's text names, as `Site.value` writes it.

`type_text("Optional[Session]")` is `Session`; a list of a class's instances reads
`X[]`, a mapping to them `X{}`, a container of containers ''. Pure string work (the last
4,096 answers remembered: annotations repeat), no tree, no language (the patterns cover
Python, TS/JS, Go, Rust, Java and C++ spellings).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["type_text"]

_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
_WRAPPERS = re.compile(r"^(?:(?:typing|t|te|typing_extensions)\.)?(?:Optional|Type|type|"
                       r"ClassVar|Final|Annotated|Box|Rc|Arc|Option|Ref|RefCell|Mutex|"
                       r"Required|NotRequired|ReadOnly|Awaitable)\[|"
                       r"^(?:Box|Rc|Arc|Option|Ref|Readonly|Promise|PromiseLike)<")
_LISTS = re.compile(r"^(?:(?:typing|t|collections\.abc|abc)\.)?(?:List|list|Sequence|"
                    r"MutableSequence|Iterable|Iterator|Collection|Set|set|FrozenSet|frozenset|"
                    r"AbstractSet|MutableSet|Deque|deque|Generator|AsyncIterator|AsyncIterable|"
                    r"AsyncGenerator)\[|^(?:Array|ReadonlyArray|Set|ReadonlySet|Iterable|"
                    r"Iterator|IterableIterator|Vec|VecDeque)<")
"""Container annotations whose elements are the class named inside (`X[]` in values)."""
_TYPING_SELF = re.compile(r"^(?:typing|t|te|typing_extensions)\.Self$")
_MAPS = re.compile(r"^(?:(?:typing|t|collections\.abc|abc|collections)\.)?(?:Dict|dict|"
                   r"Mapping|MutableMapping|DefaultDict|defaultdict|OrderedDict)\[|"
                   r"^(?:Map|ReadonlyMap|WeakMap|Record)<")
"""Mapping annotations whose values are the class named second (`X{}` in values)."""
_NULLISH = re.compile(r"^(?:None|null|undefined|void)\s*\|\s*")


@lru_cache(maxsize=4096)
def type_text(text: str) -> str:
    """The class named by an annotation: `Optional[Session]` -> `Session`, `*Server` ->
    `Server`, `: Sess` -> `Sess`, `"Session"` -> `Session`, `t.Optional["Ctx"]` -> `Ctx`,
    `T | null` -> `T`, `(any P)?` -> `P`; a list of a class's instances reads `X[]`
    (`Sub[]`, `Array<Sub>`, `List[Cmd]`, `&mut Vec<T>`), a mapping to them `X{}`
    (`Dict[str, Cmd]`, `Map<string, Sub>`, `Record<K, Sub>`); a container of
    containers: ``."""
    text = text.strip().lstrip(":").strip()
    holder = ""
    for _ in range(8):
        text = text.strip("'\" ").lstrip("&*").strip()
        text = text.removeprefix("mut ").removeprefix("const ").removeprefix("readonly ")
        text = text.removeprefix("any ").removeprefix("some ")  # (Swift existentials)
        if text.startswith(("(any ", "(some ")) and (inner := text.rstrip("?!"))[-1:] == ")":
            text = inner[1:-1]  # Swift `(any SessionStateProvider)?`
            continue
        text = _NULLISH.sub("", text)
        if (m := _WRAPPERS.match(text)) is not None:
            text = text[m.end():]
        elif (m := _LISTS.match(text) or _MAPS.match(text)) is not None:
            if holder:
                return ""
            holder = "[]" if m.re is _LISTS else "{}"
            text = text[m.end():] if holder == "[]" else _after_key(text[m.end():])
        else:
            break
    m = _TYPE_NAME.match(text)
    if m is None:
        return ""
    rest = text[m.end():]
    if rest.startswith("<"):  # `Foo<T>[]`: past the type arguments
        depth = 0
        for k, ch in enumerate(rest):
            depth += (ch == "<") - (ch == ">")
            if depth == 0:
                rest = rest[k + 1:]
                break
    if rest.startswith("[]"):
        if holder:
            return ""
        holder = "[]"
    name = _TYPING_SELF.sub("Self", m.group(0).replace("::", "."))
    return name + holder


def _after_key(args: str) -> str:
    """A mapping's type arguments past the key's (`str, Cmd]` -> `Cmd]`; '' if none)."""
    depth = 0
    for k, ch in enumerate(args):
        depth += (ch in "[<(") - (ch in "]>)")
        if depth < 0:
            return ""
        if ch == "," and depth == 0:
            return args[k + 1:]
    return ""


