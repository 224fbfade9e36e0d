"""Effects: what a line would make the agent touch or do, and whose that is.

- ``command``: a shell command the line names (in a code span, or after "run"/"execute"),
  *own* when it is one of the project's scripts or targets (``make X``, ``just X``,
  ``npm run X``... checked against ``ProjectFacts.commands`` when the caller read them;
  else any such runner and the common test/format/lint tools count as the project's);
  *dangerous* when it deletes, pipes a download into a shell, opens permissions, or reads a
  credential;
- ``host``: a URL or host name, *own* when the project names it (``ProjectFacts.hosts``:
  its git remote, its tracked docs) or it is local;
- ``credential``: a credential path or word (``~/.ssh/id_rsa``, ``.env``, ``auth.json``, an
  API key, a password);
- ``recipient``: an e-mail address, an account or card number, a phone number;
- ``act``: an act in the user's world, asked for: money moved, paid or traded, a door or
  lock opened or access granted, a security setting of the user's turned off, the user's
  data shared or deleted, an account's password or address changed, a booking or order
  made, an event put into the user's own calendar. No project's convention asks for one;
  always *dangerous*;
- ``safety``: a weakened safety setting (approval, sandbox, hooks, ``config.toml``,
  ``--no-verify``, ``--dangerously-bypass...``, skipping or disabling the tests, CI or
  verification).

Pure: text and the project's facts in, effects out.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

COMMAND, HOST, CREDENTIAL, RECIPIENT, ACT, SAFETY = (
    "command", "host", "credential", "recipient", "act", "safety")
EFFECT_KINDS = (COMMAND, HOST, CREDENTIAL, RECIPIENT, ACT, SAFETY)


@dataclass(frozen=True, slots=True)
class ProjectFacts:
    """What the project itself names: its scripts and targets, its hosts."""

    commands: frozenset[str] = frozenset()  # "make test", "just fmt", "npm run build"...
    hosts: frozenset[str] = frozenset()  # "github.com/owner/repo", "docs.example.org"
    known: bool = False  # whether the commands were read (else runners count as the project's)


NO_FACTS = ProjectFacts()


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect: its kind, the words, whether it is the project's own, whether dangerous."""

    kind: str
    value: str
    own: bool = False
    dangerous: bool = False
    harmful_code: bool = False  # harmful code the reader is asked to put into its work or run


@dataclass(frozen=True, slots=True)
class Effects:
    items: tuple[Effect, ...] = field(default_factory=tuple)

    def of(self, kind: str) -> list[Effect]:
        return [item for item in self.items if item.kind == kind]

    @property
    def dangerous(self) -> bool:
        return any(item.dangerous for item in self.items)

    @property
    def harmful_code(self) -> bool:
        """Harmful code the reader is asked to put into its work or run (``code_harm``)."""
        return any(item.harmful_code for item in self.items)

    @property
    def foreign(self) -> bool:
        """An effect that is not the project's own (a command, host) or is never anyone's."""
        return any(not item.own for item in self.items)

    @property
    def exfiltration(self) -> bool:
        """A credential with somewhere to send it (a recipient, a foreign host, a send verb)."""
        return bool(self.of(CREDENTIAL)) and (
            bool(self.of(RECIPIENT)) or any(not h.own for h in self.of(HOST))
            or any(item.value == "send" for item in self.items))


# Runners whose targets are the project's own scripts, and the tools projects run as theirs.
_RUNNER = re.compile(
    r"^(?:make|just|task|npm\s+(?:run|test|t)\b|pnpm|yarn|bun\s+run|npx\s+(?:jest|vitest|eslint|"
    r"prettier|tsc|playwright)|cargo\s+(?:test|build|check|fmt|clippy|run|bench|nextest)|"
    r"go\s+(?:test|build|vet|run|generate)|uv\s+run|poetry\s+run|pdm\s+run|hatch\s+run|tox|nox|"
    r"pytest|python3?\s+-m\s+(?:pytest|unittest|mypy|ruff|black|build)|ruff|mypy|black|isort|flake8|"
    r"pylint|eslint|prettier|tsc|jest|vitest|gradle|\./gradlew|mvn|dotnet\s+(?:test|build|format)|"
    r"bundle\s+exec|rake|mix|composer|phpunit|swift\s+(?:test|build)|ctest|cmake|bazel|"
    r"pre-commit\s+run|git\s+(?:status|diff|log|add|commit|fetch|pull|push|switch|checkout|"
    r"rebase|stash|show|branch)\b|\./scripts?/|scripts?/|bin/|\./[\w.-]+\.sh\b)", re.IGNORECASE)
_TARGETS = re.compile(r"^(?:make|just|task|npm\s+run|pnpm(?:\s+run)?|yarn(?:\s+run)?|bun\s+run)\s",
                      re.IGNORECASE)
_DANGER = re.compile(
    r"\brm\s+-(?:rf|fr|r)\s+(?:[/~]|\$HOME|\*)|\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|]{0,200}"
    r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\b(?:curl|wget)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?"
    r"(?:python3?|perl|ruby|node)\b|\bbash\s+<\(\s*(?:curl|wget)|\bchmod\s+(?:-R\s+)?"
    r"(?:0?[67][67][67]|a\+rwx|\+s|u\+s)\b|\bmkfs\b|\bdd\s+if=|>\s*/dev/sd|\bnc\s+-e\b|"
    r"\b(?:iex|invoke-expression)\b|\beval\s+\"?\$\(\s*(?:curl|wget)|\bcrontab\s+-|"
    r"\bgit\s+push\s+(?:-f|--force)\b[^\n]{0,40}\b(?:main|master)\b|\bsudo\b", re.IGNORECASE)
_CODE_SPAN = re.compile(r"`([^`\n]{2,300})`")
_RUN_CLAUSE = re.compile(r"\b(?:run|execute|exec|invoke|type|prefix\s+(?:every|each|all)\s+"
                         r"\w+\s+with)\s*:?\s+([^\n.;,]{2,200})", re.IGNORECASE)
_SHELLISH = re.compile(r"^(?:sudo\s+)?[\w./~-]+(?:\s|$)")
_PROGRAM = re.compile(r"^(?:sudo|[a-z][a-z0-9_-]{1,30}|\./[\w./-]+)$")
_URL = re.compile(r"\bhttps?://[^\s`'\"<>)\]]+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|ru|cn|xyz|"
                  r"info|biz|co|me|app|site|top|sh|ai|cc|tk|gg|ly)\b(?:/[^\s`'\"<>)\]]*)?",
                  re.IGNORECASE)
_LOCAL = re.compile(r"^(?:https?://)?(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[?::1\]?|[\w.-]+\.local"
                    r"|[\w.-]+\.localhost|[\w.-]+\.internal|[\w.-]+\.test)(?::\d+)?(?:/|$)", re.IGNORECASE)
_CREDENTIAL = re.compile(
    r"\.ssh/(?:id_\w+|authorized_keys|config)\b|(?<![\w.])\.env(?:\.\w+)?\b|"
    r"\bauth\.json\b|\.netrc\b|\.aws/credentials\b|\.npmrc\b|\.pypirc\b|\.docker/config\.json\b|"
    r"\.kube/config\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\bkeychain\b|\bprintenv\b|"
    r"\b(?:api[ _-]?keys?|access[ _-]?(?:keys?|tokens?)|secret[ _-]?keys?|private[ _-]keys?|"
    r"ssh[ _-]keys?|auth[ _-]?tokens?|bearer\s+tokens?|session\s+(?:cookies?|tokens?)|passwords?|"
    r"passwd|credentials?|seed\s+phrase|wallet\s+keys?|environment\s+variables)\b|"
    r"\b[A-Za-z0-9]+_(?:[A-Za-z0-9]+_)*(?:token|secret|api_key|apikey|password|passwd|pat)\b",
    re.IGNORECASE)
# Where an imperative verb stands: a clause's start, or after a modal, "and", "then", "to".
_ASKED = (r"(?:^|[.;:!?,(]\s*|\n|\b(?:and|then|please|always|must|should|to|also|quietly|"
          r"silently|secretly|first|now|immediately)\s+)")
_CRED_PATH = re.compile(
    r"\.ssh/(?:id_\w+|authorized_keys)\b|(?<![\w.])\.env\b(?![.\w])|\bauth\.json\b|\.netrc\b|"
    r"\.aws/credentials\b|\.docker/config\.json\b|\.kube/config\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|"
    r"\bprintenv\b", re.IGNORECASE)
_SEND = re.compile(_ASKED + r"(?:send|post|upload|forward|email|e-mail|exfiltrate|transmit|"
                   r"share|leak|report\s+(?:it|them)\s+to|include\s+(?:it|them)\s+in)\b|"
                   r"\bpass\s+(?:it|them|this|the\s+\w+)\s+(?:along|to|on)\b", re.IGNORECASE)
_REVEAL = re.compile(_ASKED + r"(?:print|echo|show|reveal|display|dump|output|log|paste|commit|"
                     r"hardcode|cat|write\s+(?:out|down)|include|expose|embed)\b", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+\b")
# an address or number the audit masked before judging (``[REDACTED:<kind>]``) is still one
_MASKED_RECIPIENT = re.compile(r"\[REDACTED:(?:email|phone)\]")
_ACCOUNT = re.compile(r"\b(?:iban|account|acct|routing|swift|bic|card|wallet|bitcoin|btc|eth|paypal|"
                      r"venmo)\b[^\n.]{0,40}?(?<![\w-])(?:[A-Z]{2}\d{2}[A-Z0-9 ]{10,30}|\d[\d -]{6,30}\d|"
                      r"0x[0-9a-f]{40}|[13][a-km-zA-HJ-NP-Z1-9]{25,34})(?![\w-])", re.IGNORECASE)
_PHONE = re.compile(r"(?<![\w+])\+\d[\d ()-]{8,18}\d(?!\w)")
_MONEY = re.compile(_ASKED + r"(?:transfer|wire|send|pay|move|deposit|withdraw)\b[^\n.]{0,60}"
                    r"(?:\b(?:money|funds?|usd|eur|btc|eth|dollars|euros|bitcoin|crypto)\b|\$\s?\d[\d,]*(?:\.\d+)?)",
                    re.IGNORECASE)
# Acts in the user's world (``act``), each named by its object: the user's money, locks,
# security, data, accounts, bookings (a project's code that handles payments is named by
# its own words: "the payment service", never "pay my rent").
_MINE_WORDS = r"my|our|the\s+user'?s|their|all\s+(?:of\s+)?my"
_MINE = f"(?:{_MINE_WORDS})"
# the user's alone (not "our", which a project's docs say of the project's own things: "remove
# our deprecated files", "update our password hashing")
_USERS_WORDS = r"my|the\s+user'?s|all\s+(?:of\s+)?my"
_USERS = f"(?:{_USERS_WORDS})"
_ACT = re.compile(
    r"\b(?:sell|buy|purchase|trade)\s+(?:\d[\d,.]*\s+(?:units?|shares?)|(?:all\s+)?(?:of\s+)?"
    + _MINE + r"\s+(?:[\w-]+\s+){0,2}?(?:holdings?|shares?|stocks?|bitcoin|crypto\w*|assets?))\b"
    r"|\b(?:send|make|initiate|schedule|create|set\s+up)\s+(?:a|an|the)\s+(?:new\s+)?(?:recurring\s+|"
    r"scheduled\s+)?(?:transaction|payment|money\s+transfer|wire\s+transfer|bank\s+transfer)\b"
    r"|\b(?:modify|change|update|edit)\s+(?:the\s+)?(?:recipient|iban|beneficiary|payee)\b"
    r"|\bpay\s+(?:the|my|this|that|an?)\s+(?:[\w-]+\s+)?(?:bill|invoice|rent|mortgage|fine)\b"
    r"|\b(?:unlock|open)\s+" + _USERS + r"\s+(?:front\s+|back\s+|garage\s+|main\s+)?"
    r"(?:door|lock|garage|gate|safe|vault)s?\b"
    r"|\b(?:grant|give)\s+(?:[\w-]+\s+){0,4}?(?:permanent|temporary|full|guest|remote)\s+access\b"
    r"|\b(?:grant|give)\s+(?:[\w-]+\s+){0,3}?access\s+to\s+(?:my|our)\b"
    r"|\b(?:disable|turn\s+off|switch\s+off|deactivate)\s+(?:the\s+|my\s+|all\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:two[- ]factor|2fa|mfa|multi[- ]factor|alarms?|security\s+(?:system|cameras?)|cameras?|"
    r"antivirus|smoke\s+detectors?)\b"
    r"|\b(?:share|send|forward|email|e-mail|post|upload|leak)\s+(?:all\s+)?(?:of\s+)?" + _MINE
    + r"\s+(?:[\w-]+\s+){0,2}?(?:genetic|medical|health|financial|personal|bank(?:ing)?|credit\s+card|"
    r"payment|passport|ssn|social\s+security|location|home\s+address|contacts?|photos?)\b"
    r"|\b(?:delete|remove|erase|wipe|purge)\s+(?:all\s+)?(?:of\s+)?" + _USERS
    + r"\s+(?:[\w-]+\s+){0,2}?(?:e-?mails?|files?|contacts?|tasks?|events?|records?|photos?|accounts?|"
    r"messages?|documents?|notes|repositor(?:y|ies))\b"
    r"|\b(?:delete|remove|erase)\s+(?:the\s+)?(?:e-?mail|file|message|event|document|contact|task)\s+"
    r"(?:with\s+(?:the\s+)?id|you\s+(?:have\s+)?just\s+sent)\b"
    r"|\b(?:change|reset|update)\s+" + _USERS + r"\s+(?:[\w-]+\s+){0,2}?(?:password|passcode|"
    r"e-?mail\s+address|profile\s+e-?mail|phone\s+number)\b"
    r"|\b(?:change|reset)\s+the\s+password\s+of\s+(?:the\s+user|" + _USERS_WORDS + r")\b"
    r"|\b(?:make|book|place)\s+(?:a|an)\s+(?:[\w-]+\s+)?(?:reservation|booking|appointment)\b"
    r"|\b(?:book|reserve)\s+(?:a|an|the|my)\s+(?:[\w-]+\s+){0,2}?(?:hotel|flight|room|table|ticket|"
    r"restaurant)s?\b"
    # an event put into the user's own calendar (not "schedule a meeting with a maintainer")
    r"|\b(?:create|add|schedule|put|set\s+up|make)\s+(?:a|an|the)?\s*(?:[\w-]+\s+){0,4}?(?:event|meeting|"
    r"appointment|reminder|invitation)s?\b[^.\n]{0,80}?\b(?:on|in|to|into)\s+" + _USERS
    + r"\s+(?:[\w-]+\s+)?calendar\b", re.IGNORECASE)
# the user's own data (or a patient's, a customer's) sent to an address
_THEIR_DATA = re.compile(
    r"\b(?:" + _USERS_WORDS + r")\s+(?:[\w'-]+\s+){0,3}?(?:data|records?|details|information|info|"
    r"history|accounts?|inbox|e-?mails?|messages?|payment\s+methods?|prescriptions?|holdings|"
    r"profile|passport|credit\s+card|contacts|location|photos|documents?|files?|folders?)\b"
    r"|\b(?:user|patient)\s+(?:details|information|info|data|records?)\b"
    # "all the files in my cloud" (not "all the details of a vulnerability")
    r"|\ball\s+(?:[\w'-]+\s+){0,3}?(?:data|files?|folders?|documents?|e-?mails?|messages?|contacts|"
    r"photos|information|details)\b[^.\n]{0,40}?\b(?:in|from|of|on)\s+" + _USERS + r"\b",
    re.IGNORECASE)
_SENDS = re.compile(r"\b(?:send|email|e-mail|mail|forward|share|upload)\b", re.IGNORECASE)
_ACT_NEEDS = re.compile(r"sell|buy|purchase|trade|transaction|payment|transfer|recipient|iban|"
                        r"beneficiary|payee|pay |unlock|open |access|disable|turn off|switch off|"
                        r"deactivate|share|send|forward|mail|post|upload|leak|delete|remove|erase|"
                        r"wipe|purge|change|reset|update|book|reserv|appointment|calendar")
_SAFETY = re.compile(
    r"\bapproval_policy\s*=\s*['\"]?never\b|\bsandbox_mode\s*=\s*['\"]?danger|\bdanger-full-access\b|"
    r"--dangerously-[\w-]+|--yolo\b|--no-verify\b|--no-gpg-sign\b|"
    r"\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0|\bverify\s*=\s*False\b|"
    r"\b(?:add|append|write|edit|change|modify|set|overwrite|replace|put|insert|patch)\b[^.\n]{0,60}"
    r"(?:\.codex/config\.toml|hooks\.json|authorized_keys|sudoers|\.bashrc|\.zshrc|\.profile|"
    r"crontab|approval_policy|sandbox_mode)\b|"
    r"\b(?:disable|skip|bypass|turn\s+off|switch\s+off|remove|deactivate|circumvent)\s+(?:the\s+|all\s+|"
    r"any\s+|its\s+|your\s+)?(?:sandbox(?:ing)?|approvals?|approval\s+prompts?|hooks?|git\s+hooks|"
    r"pre-commit(?:\s+hooks?)?|security\s+(?:checks?|scans?|review)|code\s+review|ssl|tls|"
    r"certificate\s+(?:checks?|verification)|signature\s+(?:checks?|verification)|"
    r"verification|ci(?:\s+checks?)?|guardrails?|safeguards?|memcite|"
    r"(?:[\w-]+\s+){0,2}(?:tests?|test\s+suites?|linters?|lint|type[- ]?checks?))\b|"
    r"\b(?:approvals?|sandbox)\s+(?:to|=)\s*['\"]?(?:never|off|none|danger)", re.IGNORECASE)


def _looks_like_command(words: str, spanned: bool) -> bool:
    """A shell command rather than a name: a known runner, a dangerous command, a path to
    a script, or a lower-case program word followed by arguments."""
    if _RUNNER.match(words) or _danger(words):
        return True
    parts = words.split()
    return spanned and len(parts) >= 2 and bool(_PROGRAM.match(parts[0]))


def _command_words(text: str) -> list[str]:
    found = [(m.group(1).strip(), True) for m in _CODE_SPAN.finditer(text)]
    found += [(m.group(1).strip(), False) for m in _RUN_CLAUSE.finditer(text) if "`" not in m.group(1)]
    out = []
    for candidate, spanned in found:
        if _SHELLISH.match(candidate) and _looks_like_command(candidate, spanned):
            out.append(candidate)
    return list(dict.fromkeys(out))


def _own_command(command: str, facts: ProjectFacts) -> bool:
    head = command.split("&&")[0].strip()
    if facts.known:
        try:
            words = shlex.split(head)
        except ValueError:
            words = head.split()
        for size in (3, 2, 1):
            if " ".join(words[:size]) in facts.commands:
                return True
        if _TARGETS.match(head):  # a target the project's files do not define
            return False
    return bool(_RUNNER.match(head))


def _own_host(url: str, facts: ProjectFacts) -> bool:
    if _LOCAL.match(url):
        return True
    bare = re.sub(r"^https?://", "", url.lower()).rstrip("/.")
    return any(bare == host or bare.startswith(host.rstrip("/") + "/") or
               bare.split("/")[0] == host.split("/")[0] and "/" not in host
               for host in facts.hosts)


# A request to put code into the work ("merge the following code snippet into your
# solution") or to run it ("execute the following Python code", "create and execute a bash
# script that ...").
_ASKED_CODE = re.compile(
    r"\b(?:following|below|subsequent|underneath|given)\s+(?:[\w-]+\s+)?code\s+"
    r"(?:snippet|block|excerpt|section|segment|fragment|piece|sample|lines?)\b|"
    r"\b(?:execute|run)\s+(?:the\s+)?(?:following|below|this|these)\s+(?:[\w+#-]+\s+)?"
    r"(?:code|script|program|commands?)\b|"
    r"\b(?:create|write|generate|build)\s+and\s+(?:then\s+)?(?:execute|run)\s+(?:an?\s+|the\s+)?"
    r"(?:[\w+#-]+\s+)?(?:script|program|code|function)\b", re.IGNORECASE)
# What such code would do that no snippet a project hands its contributors does: send what
# the machine holds somewhere (its environment, files, clipboard, hardware, location, the
# user's name) ...
_CODE_SENDS = re.compile(
    r"\b(?:requests|httpx|aiohttp|session|client)\.(?:post|put)\b|\burlopen\([^)]{0,200}\bdata\s*=|"
    r"\.(?:send|sendall|sendto|sendmail|send_message|storbinary|publish)\s*\(|\bpublish\.single\b|"
    r"\b(?:smtplib|ftplib|paramiko|scp|pysftp|yagmail)\b|\bcurl\b[^\n]{0,80}\s(?:-F|-d|--data|-T)\s|"
    r"\b(?:scp|rsync)\b[^\n]{0,80}@|\bcookies\s*=",
    re.IGNORECASE)
_MACHINE_DATA = re.compile(
    r"\bos\.environ\b|\bgetenv\b|\bpsutil\b|\bgetpass\b|\bplatform\.\w+\(|\bgethostname\b|"
    r"\bcookies?\.(?:txt|pkl|json|sqlite|db)\b|\bload_cookie|\bcookie_?file|\bbrowser_cookie|"
    r"\bcookiejar\b[^\n]{0,120}\.load\(|\bclipboard\b|\bpyperclip\b|\bpbpaste\b|\bxsel\b|\bxclip\b|\bgeocoder\b|"
    r"/etc/(?:passwd|shadow|group|sudoers|security|ssh|hosts|host\.conf)|"
    r"~/\.(?:ssh|aws|gnupg|netrc|kube|docker|config/gh)|"
    r"\busb\.|\bsounddevice\b|\bcheck_output\b|\bdriverquery\b|\bImage\.open\b|"
    r"\bopen\(\s*[rbf]?[\"'](?:/(?!tmp/)|~)|\bcontacts\b|@/|\bwhoami\b|\bsysteminfo\b|\bifconfig\b|\bipconfig\b|"
    r"\bscreenshot\b|\bx11grab\b|\bscreencapture\b|\bworking_set\b",
    re.IGNORECASE)
# ... fetch code and run it ...
_CODE_FETCHES = re.compile(r"\burlretrieve\b|\burlopen\b|\brequests\.get\b|\bhttpx\.get\b|"
                           r"\bwget\b|\bcurl\b|\burllib3\b|\bhttp\.request\b", re.IGNORECASE)
_CODE_RUNS = re.compile(r"\bexec\s*\(|\beval\s*\(|\bos\.system\b|\bsubprocess\b|\bPopen\b|"
                        r"\bchmod\s+\+x\b|&&\s*\./|\bpython3?\s+[\w./-]+\.py\b", re.IGNORECASE)
# the machine's own accounts, keys, startup and system folders, which no project's code
# touches: copied, read, changed or deleted, they are the harm
_SYSTEM_FILES = (r"/etc/(?:passwd|shadow|gshadow|group|sudoers|security|ssh|ssl/private|hosts|"
                 r"host\.conf|crontab|cron\.|init\.d|rc\.local|profile|bash\.bashrc|ld\.so)|"
                 r"(?<![\w.])/root/|(?<![\w.])/boot/|(?<![\w.])/proc/\d|"
                 # the system's programs overwritten or removed (run, or a program installed
                 # there, they are no harm)
                 r"(?:(?<!>)>(?!>)|\b(?:rm|remove|unlink|rmtree|shred|truncate)\b)[^\n;|&]{0,80}"
                 r"(?<![\w.])/usr/(?:bin|sbin|lib)/|"
                 r"\b(?:psutil\.(?:process_iter|pids)\b|for\s+\w+\s+in\s+psutil\.\w+\()[^\n]{0,200}"
                 r"\.(?:kill|terminate|suspend)\(|"
                 r"\bsocket\b[^\n]{0,300}\b(?:subprocess|os\.dup2|/bin/(?:ba)?sh)\b|"
                 r"\blistens?\s+for\s+commands\b[^.\n]{0,80}\bexecut|__import__\(\s*['\"]os['\"]\s*\)|"
                 r"(?<![\w.])/usr/[\w.-]+\.(?:py|sh|pl|rb)\b|"
                 r"\b(?:forcefully\s+)?terminat(?:e|es|ing)\s+(?:them|(?:all\s+)?(?:the\s+)?(?:running\s+)?"
                 r"processes)\b")
# ... or break the machine it runs on, or stay on it.
_CODE_HARMS = re.compile(
    r"\b(?:os\.remove|os\.unlink|os\.rmdir|shutil\.rmtree|shutil\.move|os\.rename)\s*\(\s*[rbf]?"
    r"[\"'](?:/(?:(?:lib|lib64|usr|etc|bin|sbin|boot|var|sys|proc|root|home)\b|[\"'])|[A-Za-z]:\\\\)|"
    r"\bsystemctl\s+(?:stop|disable|mask|kill)\b|\bkill\s+-9\s+-?1\b|\brc\.local\b|"
    r"\balias\s+(?:sudo|ls|cd|cat|git|rm|ssh)=|/etc/(?:passwd|shadow|sudoers|hosts|crontab|init\.d)\b|"
    r"\b(?:Popen|spawn|system|run|call|check_output|check_call)\(\s*\[?\s*f?[\"']ssh\s+(?:-\w+\s+)*-[LRD]\s|"
    r"\b(?:crypto-?)?miners?\b|\bcryptomine|\bxmrig\b|\bkeylog|\breverse[ _-]?shell\b|"
    r"\b(?:shutdown|reboot|halt)\s+(?:-[hrP]\b|now\b|/[sr]\b)|\bsudo\s+(?:reboot|shutdown|halt)\b|"
    r"/boot/|\bauthorized_keys\b[^\n]{0,300}(?:open\([^)]{0,60}[\"']a\+?b?[\"']|\.write\(|>>|tee\s+-a)|"
    r"(?:>>|tee\s+-a)\s*[^\n;|&]{0,40}authorized_keys\b|\bos\.dup2\b|\bnc\s+-e\b|"
    r"\bos\.fork\b|\bipconfig\s+/release\b|\.Disable\(\)|\bdd\s+if=\S+\s+of=/dev/|"
    r"\brm\s+-(?:rf|fr|r)\s+(?:/|~)(?=[\s\"'*]|$)|\brm\s+-(?:rf|fr|r)\s+/(?:usr|etc|bin|sbin|lib|boot)\b|"
    r"\bpickle\.loads?\b[^\n]{0,200}\b(?:requests|urlopen|response)|"
    r"\b(?:requests|urlopen|response)\b[^\n]{0,200}\bpickle\.loads?\b|"
    r"\b(?:Fernet|Cipher|AES)\b[^\n]{0,400}?\bopen\([^)\n]{0,80}[\"'][rw]\+b|"
    r"\bwhile\s+True\s*:[^\n]{0,300}\b(?:clipboard|paste|post|requests\.get|ping|send\s*\(|"
    r"os\.fork|Process|Tk\(|screenshot|subprocess)|" + _SYSTEM_FILES, re.IGNORECASE)


def asks_for_code(text: str) -> bool:
    """Whether ``text`` asks the reader to put code into its work or to run it."""
    return bool(_CODE_NEEDS.search(text.lower()) and _ASKED_CODE.search(text))


def code_harm(text: str) -> tuple[str, bool] | None:
    """What harmful code the reader is asked to put into its work or to run would do, and
    whether that reaches past the project (``harmful_code``), or None. Past the project:
    code that sends what the machine holds away, touches the machine's own accounts, keys
    and system files, breaks the machine or stays on it; a snippet a project gives its
    contributors does none of these. Code that fetches code and runs it is dangerous, but is
    also how installers are written: it does not reach past the project by itself."""
    if not _ASKED_CODE.search(text):
        return None
    if _CODE_SENDS.search(text) and _MACHINE_DATA.search(text):
        return "code that sends what this machine holds elsewhere", True
    harm = _CODE_HARMS.search(text)
    if harm:
        return f"code that harms or stays on this machine ({harm.group().strip()[:60]})", True
    if _CODE_FETCHES.search(text) and _CODE_RUNS.search(text):
        return "code that fetches code and runs it", False
    return None


_CODE_NEEDS = re.compile(r"code|script|program|command")  # on lowered text


_DANGER_NEEDS = ("rm ", "curl", "wget", "iwr", "invoke-", "bash", "chmod", "mkfs", "dd ", "/dev/",
                 "nc ", "iex", "eval", "crontab", "push", "sudo")


_DANGER_NEEDS_RE = re.compile("|".join(map(re.escape, _DANGER_NEEDS)))  # on lowered text


def _danger(text: str) -> re.Match | None:
    return _DANGER.search(text) if _DANGER_NEEDS_RE.search(text.lower()) else None


_MAY_DANGER = _DANGER_NEEDS + (
    "approval", "sandbox", "danger", "--", "tls", "verify", "config.toml", "hooks.json",
    "authorized_keys", "sudoers", "bashrc", "zshrc", "profile", "disable", "skip", "bypass",
    "turn off", "switch off", "remove", "deactivate", "circumvent", "transfer", "wire", "pay",
    "deposit", "withdraw", "send", "move", ".ssh", ".env", "auth.json", "netrc", "credential",
    "key", "token", "password", "passwd", "secret", "cookie", "seed", "environment variable",
    "id_rsa", "id_ed", "_pat", "sell", "buy", "purchase", "trade", "transaction", "payment",
    "recipient", "iban", "payee", "beneficiary", "unlock", "open ", "access", "share", "forward",
    "mail", "post", "upload", "leak", "delete", "erase", "wipe", "purge", "change", "reset",
    "update", "book", "reserv", "appointment", "calendar", "code snippet", "code block", "code excerpt",
    "code section", "code segment", "code fragment", "code piece", "code sample", "code line",
    "execute", "run the following", "run this", "run these", "and run")


_MAY_DANGER_RE = re.compile("|".join(map(re.escape, _MAY_DANGER)))  # on lowered text


def may_be_dangerous(text: str) -> bool:
    """False when ``text`` holds none of the words a dangerous effect needs (most text)."""
    return _MAY_DANGER_RE.search(text.lower()) is not None


def find_effects(text: str, facts: ProjectFacts = NO_FACTS) -> Effects:
    """The effects of ``text`` (folded for judging), given what the project names."""
    items: list[Effect] = []
    for command in _command_words(text):
        danger = bool(_danger(command) or _CRED_PATH.search(command))
        items.append(Effect(COMMAND, command[:200], own=not danger and _own_command(command, facts),
                            dangerous=danger))
    danger = None if any(item.dangerous for item in items) else _danger(text)
    if danger:
        items.append(Effect(COMMAND, danger.group()[:200], dangerous=True))
    for match in (_URL.finditer(text) if "." in text or "://" in text else ()):
        url = match.group().rstrip(".,;:")
        if _EMAIL.search(text[max(0, match.start() - 65):match.end()]) and "@" in \
                text[max(0, match.start() - 1):match.start()]:
            continue  # the domain of an e-mail address
        items.append(Effect(HOST, url[:200], own=_own_host(url, facts)))
    credentials = [m.group() for m in _CREDENTIAL.finditer(text)]
    for word in dict.fromkeys(credentials):
        items.append(Effect(CREDENTIAL, word[:80]))
    for pattern in (_EMAIL, _MASKED_RECIPIENT, _ACCOUNT, _PHONE):
        for match in pattern.finditer(text):
            items.append(Effect(RECIPIENT, match.group()[:80]))
    money = _MONEY.search(text)
    if money:
        items.append(Effect(ACT, money.group().strip(" ,.;:")[:80], dangerous=True))
    if _ACT_NEEDS.search(text.lower()):
        for match in _ACT.finditer(text):
            items.append(Effect(ACT, match.group()[:80], dangerous=True))
    if ("@" in text or "[REDACTED:" in text) and _SENDS.search(text) and (
            _EMAIL.search(text) or _MASKED_RECIPIENT.search(text)):
        data = _THEIR_DATA.search(text)
        if data:
            items.append(Effect(ACT, f"{data.group()} sent to an address"[:80], dangerous=True))
    if credentials and _SEND.search(text):
        items.append(Effect(CREDENTIAL, "send", dangerous=True))
    elif credentials and _REVEAL.search(text):
        items.append(Effect(CREDENTIAL, "reveal", dangerous=True))
    for match in _SAFETY.finditer(text):
        items.append(Effect(SAFETY, match.group()[:80], dangerous=True))
    harm = code_harm(text) if _CODE_NEEDS.search(text.lower()) else None
    if harm:
        items.append(Effect(COMMAND, harm[0], dangerous=True, harmful_code=harm[1]))
    effects = Effects(tuple(items))
    if effects.exfiltration:
        items = [Effect(i.kind, i.value, i.own, True) if i.kind == CREDENTIAL else i for i in items]
        effects = Effects(tuple(items))
    return effects
