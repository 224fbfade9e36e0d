"""Where the words of a memory came from: one session file read into source segments.

A Codex session file (rollout JSONL, see ``memcite.ledger.session_scan``) holds, in time
order, everything the thread saw. ``read_segments`` keeps the parts a memory's words can
come from, each a ``Segment``:

- ``user``: a message the person typed (a ``response_item`` ``message`` of role ``user``);
- ``context``: a user-role message Codex wrote itself (``<environment_context>``, the
  project's ``AGENTS.md`` instructions, ``<user_instructions>``...): not the person's words;
- ``assistant``: the model's own text (``output_text`` of an assistant message);
- ``tool``: a tool's output (``function_call_output``, ``custom_tool_call_output``), naming
  the tool and its call id: ``exec_command``/``shell`` output, ``apply_patch``...;
- ``mcp``: the result of an MCP server's tool (a call whose namespace or name starts
  ``mcp__``);
- ``web``: a web search (``web_search_call``: its query and any sources Codex kept; the
  results themselves never reach the session file);
- ``outside-file``: the output of a command that read a file outside the thread's project
  (``cat``, ``sed``, ``head``... of an absolute path not under the session's ``cwd``).

``tool``, ``mcp``, ``web`` and ``outside-file`` are *tainted*: words that came from them came
from the world, not from the user.

``origin_of`` says where a sentence's words first appear: the first segment, in time order,
that holds at least ``threshold`` (default ``DEFAULT_THRESHOLD``, 0.6) of the sentence's word
pairs (bigrams of lower-cased words); a sentence of fewer than ``MIN_WORDS`` (3) words is
matched nowhere. It is a plain deterministic text match: the same files give the same answer.

Sessions are untrusted: a line longer than its limit is skipped without being held, one
that is not JSON is counted with its number, a file is read at most ``max_bytes``; a
segment's text is cut to ``MAX_SEGMENT_CHARS``. Nothing is written.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from memcite.judgement.origin import paths_read
from memcite.ledger import session_scan as scan
from memcite.untrusted import loads_json, storable

DEFAULT_THRESHOLD = 0.6
MIN_WORDS = 3  # a shorter sentence ("## Learned", "Done.") is matched nowhere
MAX_SEGMENT_CHARS = 512 * 1024  # a tool output longer than this is matched on its start
MAX_SEGMENTS = 200_000
TAINTED_KINDS = frozenset({"tool", "mcp", "web", "outside-file"})
SEGMENT_KINDS = ("user", "context", "assistant", "tool", "mcp", "web", "outside-file")

# User-role messages Codex writes itself (0.169-0.171), by their start.
_CONTEXT_STARTS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                   "<permissions instructions>", "<turn_aborted>", "<user_shell_command>",
                   "<skill>", "<subagent_notification>", "<INSTRUCTIONS>", "<collaboration_mode>")
# Tools whose call runs a shell command.
_SHELL_TOOLS = frozenset({"exec_command", "shell", "shell_command", "local_shell", "container.exec",
                          "exec"})
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[_$]\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Segment:
    """One part of a session a memory's words may come from."""

    kind: str  # one of SEGMENT_KINDS
    line: int  # the session file's line (1-based)
    at: str | None  # the line's timestamp (RFC 3339) as Codex wrote it
    text: str
    tool: str | None = None  # the tool's name (``mcp__server/tool`` for MCP), for tool kinds
    call_id: str | None = None
    detail: str | None = None  # the command run, the query searched, the file read
    read_back: bool = False  # it reads Codex's memory folder or a file this thread wrote

    @property
    def tainted(self) -> bool:
        return self.kind in TAINTED_KINDS and not self.read_back


@dataclass(frozen=True, slots=True)
class SessionSegments:
    """A session file read into segments, with what was skipped."""

    path: str
    thread_id: str | None
    cwd: str | None
    source: str
    segments: tuple[Segment, ...]
    bad_line_count: int = 0  # lines that were not JSON objects: skipped
    long_lines: int = 0  # lines over the limit, skipped unread
    partial: bool = False  # stopped at max_bytes
    cut_segments: int = 0  # segments whose text was cut to MAX_SEGMENT_CHARS


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a sentence's words first appear: the segment, and the share of word pairs it holds."""

    segment: Segment
    share: float


@dataclass(slots=True)
class _Call:
    name: str
    detail: str | None
    kind: str = "tool"
    read_back: bool = False


@dataclass(slots=True)
class _Reading:
    segments: list[Segment] = field(default_factory=list)
    calls: dict[str, _Call] = field(default_factory=dict)
    cut: int = 0
    written: set = field(default_factory=set)  # files this thread's apply_patch calls wrote


def _texts(content: object, types: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(part["text"] for part in content
                   if isinstance(part, dict) and part.get("type") in types
                   and isinstance(part.get("text"), str))


def _output_text(output: object) -> str:
    """A tool output's text: a string, a list of content items, or ``{content, ...}``."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return _texts(output, ("input_text", "output_text", "text"))
    if isinstance(output, dict):
        for key in ("content", "output", "text", "result"):
            if key in output:
                return _output_text(output[key])
    return ""


def _command_of(name: str, arguments: object) -> str | None:
    """The shell command a call runs (from its JSON arguments or freeform input), if any."""
    if isinstance(arguments, str):
        text = arguments
        try:
            arguments = loads_json(arguments) if arguments.lstrip().startswith("{") else arguments
        except ValueError:
            return text[:2000] if name in _SHELL_TOOLS else None
    if isinstance(arguments, dict):
        for key in ("cmd", "command", "input", "script"):
            value = arguments.get(key)
            if isinstance(value, list) and all(isinstance(part, str) for part in value):
                return shlex.join(value)[:2000]
            if isinstance(value, str):
                return value[:2000]
        return None
    if isinstance(arguments, str) and name in _SHELL_TOOLS:
        return arguments[:2000]
    return None


def _inside(path: str, root: str | None) -> bool:
    if not root:
        return True
    path = os.path.normpath(path)
    root = os.path.normpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def outside_file_read(command: str | None, cwd: str | None) -> str | None:
    """The absolute path outside ``cwd`` that ``command`` reads with a file reader, or None."""
    if not command or not cwd:
        return None
    for word in paths_read(command):
        expanded = os.path.expanduser(word) if word.startswith("~") else word
        if os.path.isabs(expanded) and not _inside(expanded, cwd):
            return storable(word)
    return None


_PATCH_FILE = re.compile(r"^\s*\*\*\* (?:Add|Update) File: (.+?)\s*$|^\s*\*\*\* Move to: (.+?)\s*$",
                         re.MULTILINE)
_MEMORY_FOLDER = re.compile(r"(?:^|[/\\])(?:\.codex[/\\])?memories(?:_v2)?[/\\](?:MEMORY\.md|"
                            r"memory_summary\.md|raw_memories\.md|rollout_summaries|extensions)|"
                            r"(?:^|[/\\])\.codex[/\\]memories")


def _absolute(path: str, cwd: str | None) -> str:
    path = os.path.expanduser(path) if path.startswith("~") else path
    return os.path.normpath(path if os.path.isabs(path) or not cwd else os.path.join(cwd, path))


def _patched_files(arguments: object, cwd: str | None) -> set:
    """The files an ``apply_patch`` call adds or updates (absolute, as far as ``cwd`` tells)."""
    text = arguments if isinstance(arguments, str) else ""
    if text.lstrip().startswith("{"):
        try:
            arguments = loads_json(text)
        except ValueError:
            pass
    if isinstance(arguments, dict):
        for key in ("input", "patch", "command"):
            if isinstance(arguments.get(key), str):
                text = arguments[key]
                break
    return {_absolute(a or b, cwd) for a, b in _PATCH_FILE.findall(text[:4_000_000]) if a or b}


def _reads_back(command: str | None, cwd: str | None, written: set) -> bool:
    """Whether ``command`` reads Codex's memory folder, or a file this thread wrote itself:
    its words were written from something the thread saw before, never a new origin."""
    if not command:
        return False
    if _MEMORY_FOLDER.search(command):
        return True
    if not written:
        return False
    return any(_absolute(word, cwd) in written for word in paths_read(command))


def _tool_name(payload: dict) -> tuple[str, str]:
    """``(name, kind)`` of a tool call: MCP tools by their ``mcp__`` namespace or name."""
    name = payload.get("name") if isinstance(payload.get("name"), str) else "tool"
    namespace = payload.get("namespace") if isinstance(payload.get("namespace"), str) else ""
    if namespace.startswith("mcp__"):
        return storable(f"{namespace}/{name}")[:200], "mcp"
    if name.startswith("mcp__"):
        return storable(name)[:200], "mcp"
    return storable(f"{namespace}.{name}" if namespace else name)[:200], "tool"


def _add(reading: _Reading, segment_kind: str, line: int, at: object, text: str, **extra) -> None:
    if not text.strip() or len(reading.segments) >= MAX_SEGMENTS:
        return
    if len(text) > MAX_SEGMENT_CHARS:
        text = text[:MAX_SEGMENT_CHARS]
        reading.cut += 1
    reading.segments.append(Segment(segment_kind, line, at if isinstance(at, str) else None,
                                    storable(text), **extra))


def _read_item(reading: _Reading, payload: dict, line: int, at: object, cwd: str | None) -> None:
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        if role == "user":
            text = _texts(payload.get("content"), ("input_text",))
            stripped = text.lstrip()
            who = "context" if stripped.startswith(_CONTEXT_STARTS) else "user"
            _add(reading, who, line, at, text)
        elif role == "assistant":
            _add(reading, "assistant", line, at, _texts(payload.get("content"), ("output_text",)))
        return
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
        if kind == "local_shell_call":
            name, tool_kind = "local_shell", "tool"
            arguments = (payload.get("action") or {}) if isinstance(payload.get("action"), dict) else {}
        else:
            name, tool_kind = _tool_name(payload)
            arguments = payload.get("arguments", payload.get("input"))
        command = _command_of(name.rsplit(".", 1)[-1], arguments) if tool_kind == "tool" else None
        if name.rsplit(".", 1)[-1] == "apply_patch" and len(reading.written) < MAX_SEGMENTS:
            reading.written.update(_patched_files(arguments, cwd))
            command = None
        outside = outside_file_read(command, cwd)
        if call_id:
            if len(reading.calls) < MAX_SEGMENTS:
                reading.calls[call_id] = _Call(name, storable(outside or command or "") or None,
                                               "outside-file" if outside else tool_kind,
                                               _reads_back(command, cwd, reading.written))
        return
    if kind in ("function_call_output", "custom_tool_call_output"):
        call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
        call = reading.calls.get(call_id or "") or _Call("tool", None)
        _add(reading, call.kind, line, at, _output_text(payload.get("output")), tool=call.name,
             call_id=storable(call_id) if call_id else None, detail=call.detail,
             read_back=call.read_back)
        return
    if kind == "web_search_call":
        action = payload.get("action") if isinstance(payload.get("action"), dict) else {}
        words = []
        for key in ("query", "url", "pattern"):
            if isinstance(action.get(key), str):
                words.append(action[key])
        queries = action.get("queries")
        if isinstance(queries, list):
            words.extend(query for query in queries if isinstance(query, str))
        sources = action.get("sources")
        if isinstance(sources, list):
            for source in sources:
                if isinstance(source, dict):
                    words.extend(str(value) for value in source.values() if isinstance(value, str))
        call_id = payload.get("id") if isinstance(payload.get("id"), str) else None
        _add(reading, "web", line, at, "\n".join(words), tool="web_search",
             call_id=storable(call_id) if call_id else None,
             detail=storable(words[0])[:500] if words else None)


def read_segments(path: str, *, max_bytes: int = scan.DEFAULT_MAX_FILE_BYTES) -> SessionSegments:
    """The source segments of the session file at ``path``, in time (file) order.

    Raises ``session_scan.SessionFileError`` when the file cannot be opened."""
    counts = scan.ScanCounts()
    reading = _Reading()
    thread_id = cwd = None
    source = "unknown"
    meta_seen = False
    with scan.open_session(path) as handle:
        for number, kind, payload, at in scan.scan_lines(
                handle, counts, kinds=frozenset({"meta", "developer", "assistant", "response"}),
                max_bytes=max_bytes):
            if kind == "meta":
                if not meta_seen:  # a fork's copies of its parent's meta come later
                    meta_seen = True
                    thread_id = scan.text_of(payload.get("id"))
                    cwd = scan.text_of(payload.get("cwd"))
                    source = scan.source_kind(payload.get("source"))
                continue
            if kind == "developer":
                continue
            _read_item(reading, payload, number, at, cwd)
    return SessionSegments(path=storable(path), thread_id=thread_id, cwd=cwd, source=source,
                           segments=tuple(reading.segments), bad_line_count=counts.bad_lines,
                           long_lines=counts.long_lines,
                           partial=counts.partial, cut_segments=reading.cut)


# --------------------------------------------------------------------------- matching


# the words of any sentence about the agent's reply, which tell nothing of whose it is
_REPLY_WORDS = frozenset({"your", "answer", "answers", "response", "responses", "reply", "replies",
                          "respond", "using", "with", "into", "from", "that", "this", "each",
                          "every", "please", "always", "should", "must", "user"})


def words_of(text: str) -> list[str]:
    """The lower-cased words of ``text`` (letters and digits; ``_name`` and ``$VAR`` kept whole)."""
    if "\u0130" in text:  # the one letter whose lower case ("i" and a dot above) splits a word
        return [word.lower() for word in _WORD.findall(text)]
    return _WORD.findall(text.lower())


def _grams(words: list[str]) -> set:
    if len(words) == 1:
        return {words[0]}
    return {(words[index], words[index + 1]) for index in range(len(words) - 1)}


# a sentence ends at ".", "!" or "?" and a space before what starts one; a code fence after it
# ("Run the following code. ```...```") is the code it names, not a sentence of its own
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[*A-Z0-9-]|`(?!``))")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


def split_sentences(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, sentence)`` of each sentence of ``text``: its lines, then the sentences
    within a line (after ``.``/``!``/``?`` and a space); list markers kept out, blank ones
    left out."""
    out = []
    line_start = 0
    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        position = bullet.end() if bullet else 0
        for match in list(_SENTENCE_END.finditer(line, position)) + [None]:
            end = match.start() if match else len(line)
            piece = line[position:end]
            body = piece.strip()
            if words_of(body):
                start = line_start + position + (len(piece) - len(piece.lstrip()))
                out.append((start, start + len(body), body))
            if match:
                position = match.end()
        line_start += len(line) + 1
    return out


class SegmentIndex:
    """The word pairs of each segment, computed once, for matching many sentences; with the
    thread's ``cwd``, where each segment's words came from (``origin_class``)."""

    __slots__ = ("segments", "_grams", "_content_grams", "cwd", "tracked", "_lowest", "_user_words")

    def __init__(self, segments, cwd: str | None = None, tracked=None) -> None:
        self.segments = tuple(segments)
        self._grams: list[set | None] = [None] * len(self.segments)
        self._content_grams: list[set | None] = [None] * len(self.segments)
        self.cwd = cwd
        self.tracked = tracked  # path -> bool | None: the project's git index, when read
        self._lowest: str | None = None
        self._user_words: frozenset | None = None

    def unrecorded(self, sentence: str) -> bool:
        """Whether words of ``sentence`` found nowhere in the thread may come from
        third-party content it read but never wrote down (a web search: Codex keeps the
        query, not the results), and do not echo the user (``echoes_user``)."""
        return any(segment.kind == "web" for segment in self.segments) \
            and not self.echoes_user(sentence)

    def echoes_user(self, sentence: str) -> bool:
        """Whether at least half of ``sentence``'s own words (of four letters or more, the
        reply's words aside) are in the user's messages of the thread: a summary's rewording
        of what the user asked, rather than words from elsewhere."""
        if self._user_words is None:
            self._user_words = frozenset(word for segment in self.segments if segment.kind == "user"
                                         for word in words_of(segment.text))
        words = {word for word in words_of(sentence) if len(word) >= 4 and word not in _REPLY_WORDS}
        return bool(words) and 2 * len(words & self._user_words) >= len(words)

    def grams(self, index: int) -> set:
        held = self._grams[index]
        if held is None:
            words = words_of(self.segments[index].text)
            held = _grams(words) | set(words)
            self._grams[index] = held
        return held

    def content_grams(self, index: int) -> set:
        """The pairs of a segment's content words (``content_words``), computed once."""
        held = self._content_grams[index]
        if held is None:
            held = self._content_grams[index] = _grams(content_words(words_of(self.segments[index].text)))
        return held

    def origin_class(self, segment: Segment) -> str:
        """The trust rank's name of a segment (``memcite.judgement.origin``): a read-back is
        the project's (what Codex or the thread wrote itself)."""
        from memcite.judgement import origin as og

        if segment.read_back:
            return og.PROJECT
        return og.of_segment(segment.kind, segment.detail, self.cwd, self.tracked)

    @property
    def lowest(self) -> str:
        """The least trusted origin the thread read: what an unplaced memory inherits."""
        if self._lowest is None:
            from memcite.judgement import origin as og

            self._lowest = og.lowest({self.origin_class(s) for s in self.segments
                                      if s.kind not in ("user", "assistant")})
        return self._lowest


def origin_of(sentence: str, segments, *, threshold: float = DEFAULT_THRESHOLD) -> Origin | None:
    """The first segment (in time order) holding at least ``threshold`` of ``sentence``'s
    word pairs, with that share; None when none does (or the sentence has fewer than
    ``MIN_WORDS`` words). A message of the user's holding it wins wherever else the words
    appeared first (the user's word wins); a read-back (``Segment.read_back``: Codex's
    memory folder, a file the thread wrote) is the place only when nothing else holds it.

    ``segments`` is a sequence of ``Segment`` or a ``SegmentIndex`` (faster for many
    sentences of one session)."""
    index = segments if isinstance(segments, SegmentIndex) else SegmentIndex(segments)
    words = words_of(sentence)
    if len(words) < MIN_WORDS:  # too short to tell where it came from
        return None
    return _first_place(index, _grams(words), index.grams, threshold)


def _first_place(index: SegmentIndex, wanted: set, held_by, threshold: float) -> Origin | None:
    """The first segment whose pairs (``held_by(position)``) hold ``threshold`` of ``wanted``:
    after it, only a message of the user's can win; a read-back only when nothing else holds
    them."""
    first = back = None
    for position, segment in enumerate(index.segments):
        if first is not None and segment.kind != "user":
            continue  # after the first place, only a message of the user's can win
        held = held_by(position)
        share = sum(1 for gram in wanted if gram in held) / len(wanted)
        if share < threshold:
            continue
        if segment.kind == "user":  # the user's word wins, wherever else it appeared first
            return Origin(segment, round(share, 3))
        if segment.read_back:  # read back from the memory or a file it wrote: look on
            back = back or Origin(segment, round(share, 3))
            continue
        first = Origin(segment, round(share, 3))
    return first or back


# English function words: articles, pronouns, prepositions, conjunctions, auxiliaries and
# modals, the words a terse note drops ("send the file to the server" -> "send file server").
FUNCTION_WORDS = frozenset("""
a an the this that these those some any each every all both either neither no such
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
to of in on at by for with from into onto upon about over under after before between through
during without within along across against among toward towards via per than as
and or but nor so yet then also too very just only even still
is are was were be been being am do does did done have has had having
will would shall should can could may might must ought
not there here which who whom whose what when where why how if whether because while
please
""".split())
MIN_CONTENT_WORDS = 4  # fewer content words than this place nothing by themselves


def content_words(words: list[str]) -> list[str]:
    """``words`` without the function words (``FUNCTION_WORDS``), in their order."""
    return [word for word in words if word not in FUNCTION_WORDS]


def loose_origin(sentence: str, segments, *, threshold: float = DEFAULT_THRESHOLD) -> Origin | None:
    """Where a sentence cut to its content words first appears: the first segment holding at
    least ``threshold`` of the pairs of ``sentence``'s content words, with the function words
    of both left out; None with fewer than ``MIN_CONTENT_WORDS`` content words. For what
    ``origin_of`` does not place: a terse note drops the small words between the content
    words of what it read ("send file server"), and so most of its word pairs. As with
    ``origin_of``, a message of the user's holding it wins, and a read-back is the place only
    when nothing else holds it."""
    index = segments if isinstance(segments, SegmentIndex) else SegmentIndex(segments)
    words = content_words(words_of(sentence))
    if len(words) < MIN_CONTENT_WORDS:
        return None
    return _first_place(index, _grams(words), index.content_grams, threshold)


_URL = re.compile(r"https?://[^\s`'\"<>)\]]+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|ru|cn|xyz|info|biz)"
                  r"(?:/[^\s`'\"<>)\]]*)?", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]{4,200})`")
_PATH = re.compile(r"(?<![\w/.:-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+|\b[A-Za-z]:\\(?:[^\\\s`'\"]+\\)*"
                   r"[^\\\s`'\"]+")
_EMAIL = re.compile(r"\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+\b")
_NUMBER = re.compile(r"(?<![\w.])\+?\d[\d -]{6,30}\d(?![\w.])")  # accounts, cards, phones


def anchors_of(sentence: str) -> list[str]:
    """The parts of a sentence a rewording keeps, exactly: its URLs and host names, its
    `code` spans, file paths, e-mail addresses and long numbers (accounts, cards, phones)."""
    found = [match.group().rstrip(".,;:").lower() for match in _URL.finditer(sentence)]
    found += [match.group(1).strip().lower() for match in _CODE.finditer(sentence)]
    found += [match.group().rstrip(".,;:").lower() for match in _PATH.finditer(sentence)
              if "\\" in match.group() or match.group().startswith(("~", "/", "."))
              or "." in match.group().rsplit("/", 1)[-1] or match.group().count("/") >= 2]
    found += [match.group().lower() for match in _EMAIL.finditer(sentence)]
    found += [" ".join(match.group().split()) for match in _NUMBER.finditer(sentence)
              if sum(ch.isdigit() for ch in match.group()) >= 8]
    return [anchor for anchor in dict.fromkeys(found) if len(anchor) >= 4]


def anchor_origin(sentence: str, segments) -> Origin | None:
    """Where a reworded sentence's anchors (``anchors_of``) first appear: the first segment,
    in time order, holding any of them, with the share of them it holds; None without
    anchors or when no segment holds one. For a sentence the text match (``origin_of``)
    does not place: a memory may reword a line and keep its URL or command. As with
    ``origin_of``, a message of the user's holding one wins, and a read-back is the place
    only when nothing else holds one."""
    anchors = anchors_of(sentence)
    if not anchors:
        return None
    first = back = None
    for segment in (segments.segments if isinstance(segments, SegmentIndex) else segments):
        if first is not None and segment.kind != "user":
            continue
        text = segment.text.lower()
        held = sum(1 for anchor in anchors if anchor in text)
        if not held:
            continue
        found = Origin(segment, round(held / len(anchors), 3))
        if segment.kind == "user":  # the user's word wins
            return found
        if segment.read_back:
            back = back or found
            continue
        first = found
    return first or back

