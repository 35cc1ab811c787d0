"""The guard pipeline: text → AST → findings/edits → verdict. Pure and synchronous.

Each round runs the text-stage rules (fences), parses, runs every rule plugin in hook order,
applies the non-overlapping fixes and re-parses; it repeats until no rule proposes a fix (at
most `MAX_ROUNDS`). Findings are reported with spans in the *original* text's coordinates.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import pluggy
from cachetools import LRUCache

from query_guard.guard.caches import verdict_cache
from query_guard.guard.hookcalls import PerPluginCalls
from query_guard.guard.language import Language
from query_guard.model import Action, Edit, Finding, Severity, Verdict, apply_edits
from query_guard.schema.context import GuardContext

log = logging.getLogger(__name__)

MAX_ROUNDS = 3
# Rules whose crash blocks the query: without them a write or an unbounded result could pass.
FAIL_CLOSED_RULES = frozenset(
    {
        "read_only", "gremlin_read_only", "sql_read_only",
        "limits", "gremlin_limits", "sql_limits", "resource_limits", "range_limits",
    }
)  # fmt: skip


class Guard:
    """One configured guard: plugin manager + context + verdict cache (per server instance)."""

    def __init__(
        self,
        pm: pluggy.PluginManager,
        ctx: GuardContext,
        languages: dict[str, Language],
        cache_size: int | None = None,
    ) -> None:
        self.pm = pm
        self._calls = PerPluginCalls(pm)
        self.ctx = ctx
        self.languages = languages
        size = ctx.settings.cache_size if cache_size is None else cache_size
        self._cache: LRUCache[tuple[str, str], Verdict] | None = verdict_cache(
            size, ctx.settings.cache_bytes
        )
        self._cache_max_query = ctx.settings.cache_max_query_bytes
        self._cache_lock = threading.Lock()

    def use_schema(self, schema: Any) -> None:
        """Swap in a re-discovered schema catalog; cached verdicts were made with the old one."""
        self.ctx = replace(self.ctx, schema=schema)
        if self._cache is not None:
            with self._cache_lock:
                self._cache.clear()

    def warm_up(self) -> None:
        """Build every language's parser now, so the first client query does not pay for it."""
        for lang in self.languages.values():
            if lang.sample:
                lang.parse(lang.sample)

    def cached(self, text: str, language: str = "cypher") -> Verdict | None:
        """The cached verdict for `text`, if there is one (cheap: no guard work)."""
        if self._cache is None:
            return None
        with self._cache_lock:
            return self._cache.get((language, text))

    def check(self, text: str, language: str = "cypher") -> Verdict:
        if not isinstance(text, str):
            raise TypeError(f"the query must be a string, not {type(text).__name__}")
        cache = self._cache
        if cache is not None and self._cache_max_query and len(text) > self._cache_max_query:
            cache = None  # a long query is rarely repeated; caching it would cost its size
        if cache is not None:
            with self._cache_lock:  # frontends call the guard from a thread pool
                hit = cache.get((language, text))
            if hit is not None:
                return hit
        ctx = self.ctx
        verdict = self._check(text, language)
        if cache is not None and self.ctx is ctx:  # not if a new schema came meanwhile
            with self._cache_lock, contextlib.suppress(ValueError):  # ValueError: too big
                cache[(language, text)] = verdict
        return verdict

    # ------------------------------------------------------------------ the rounds

    def _check(self, original: str, language: str) -> Verdict:
        lang = self.languages.get(language)
        if lang is None:
            known = sorted(self.languages)
            raise ValueError(f"unknown query language {language!r}; known: {known}")
        text = original
        history: list[list[Edit]] = []  # edits applied per step, for mapping spans back
        kept: list[Finding] = []  # findings whose fixes were applied, original coordinates
        latest: list[Finding] = []
        parsed: Any = None  # the parse of `text`, when the previous round already made it
        pending: list[Edit] = []  # edits applied to `text` after `parsed` was made
        for round_no in range(MAX_ROUNDS + 1):
            text_findings = self._run_text_rules(text, language)
            if _has_error(text_findings):
                # e.g. LIM.NESTING: such text must never reach the parser (or a rule)
                latest = _map_findings(text_findings, history)
                return self._verdict(original, text, kept, latest)
            edits = _select_edits(text_findings)
            if edits:
                kept += _map_findings(_applied(text_findings, edits), history)
                text = apply_edits(text, edits)
                history.append(edits)
                parsed = None
                # the text rules judge the text that is parsed, not only the text before the
                # edits (a quote in stripped prose must not hide a comment); fixes wait
                text_findings = [f for f in self._run_text_rules(text, language) if not f.fix]
            if parsed is None:
                try:
                    parsed = lang.parse(text)
                except lang.syntax_errors as exc:
                    latest = _map_findings(lang.describe_error(exc, text), history)
                    return self._verdict(original, text, kept, latest)
            findings = [f for f in text_findings if not f.fix]
            findings += self._call(lang.hook, {lang.argument: parsed, "ctx": self.ctx})
            findings += self._embedded(lang, parsed, text)
            latest = _map_findings(findings, history)
            if _has_error(findings):
                return self._verdict(original, text, kept, latest, _facts(lang, parsed))
            edits = _select_edits(findings)
            if not edits:
                break
            if round_no == MAX_ROUNDS:  # out of rounds: report what is left, unfixed
                latest = [f.without_fix() for f in latest]
                break
            candidate = apply_edits(text, edits)
            if all(f.final and _fix_in(f, edits) for f in findings if f.fix):
                # Every fix promises it re-parses and enables no other fix: the next round
                # would only repeat the unfixed findings, so skip its parse.
                kept += [f for f in latest if f.fix]
                latest = [f for f in latest if not f.fix]
                history.append(edits)
                text = candidate
                pending = edits
                break
            try:
                parsed = lang.parse(candidate)
            except lang.syntax_errors:
                # A rule produced text that does not parse: keep the query as it was and say
                # so, rather than forward something broken.
                log.warning("rule edits broke the query; edits dropped: %r", edits)
                latest = [f.without_fix() for f in latest]
                break
            kept += [f for f in latest if f.fix and _fix_in(f, edits)]
            history.append(edits)
            text = candidate
        return self._verdict(original, text, kept, latest, _facts(lang, parsed), lang, parsed,
                             pending)  # fmt: skip

    def _verdict(
        self,
        original: str,
        text: str,
        kept: list[Finding],
        latest: list[Finding],
        facts: tuple[bool, str] = (False, ""),
        lang: Language | None = None,
        parsed: Any = None,
        pending: Sequence[Edit] = (),
    ) -> Verdict:
        findings = tuple(_dedupe([*kept, *latest]))
        explain, query_type = facts
        if _has_error(findings):
            return Verdict(Action.BLOCK, original, findings, original, explain=explain,
                           query_type=query_type)  # fmt: skip
        forward = ""
        if lang is not None and lang.emit is not None and parsed is not None:
            try:
                forward = lang.emit(parsed, pending)
            except (ValueError, *lang.syntax_errors) as exc:
                # the judged tokens cannot be printed so that every reader sees them: refuse
                refusal = Finding(
                    "SEC.AMBIGUOUS_TEXT", Severity.ERROR, str(exc), (0, 0), rule="emit"
                )
                return Verdict(Action.BLOCK, original, (*findings, refusal), original,
                               explain=explain, query_type=query_type)  # fmt: skip
        action = Action.ALLOW if text == original else Action.REWRITE
        return Verdict(action, text, findings, original, forward=forward, explain=explain,
                       query_type=query_type)  # fmt: skip

    def _embedded(self, lang: Language, parsed: Any, text: str) -> list[Finding]:
        """Findings of the queries embedded in `text`, checked by their own language's rules,
        spans moved into `text`; a rewritten body is one edit that every fixed finding shares."""
        out: list[Finding] = []
        for (start, end), inner in lang.embedded(parsed) if lang.embedded else ():
            verdict = self.check(text[start:end], inner)
            edit = (Edit(start, end, verdict.query),) if verdict.action is Action.REWRITE else None
            for f in verdict.findings:
                span = (f.span[0] + start, f.span[1] + start)
                message = f"in the {inner} query: {f.message}"
                fix = edit if f.fix else None  # the body's fixes were applied together
                out.append(replace(f, span=span, message=message, fix=fix, final=False))
        return out

    def _run_text_rules(self, text: str, language: str) -> list[Finding]:
        return self._call("guard_text", {"text": text, "language": language, "ctx": self.ctx})

    def _call(self, hook_name: str, kwargs: dict[str, Any]) -> list[Finding]:
        """Call the hook through pluggy (`query_guard.guard.hookcalls`), tagging findings with
        their rule.

        A rule that raises or returns something other than findings must not take the proxy
        down: its failure becomes a finding — an error (the query is blocked: fail closed) for
        the rules that keep the database safe and results bounded (`FAIL_CLOSED_RULES`) or for
        every rule under `[guard] on_rule_error = "block"`; else a warning."""
        out: list[Finding] = []
        for name, returned in self._calls.results(hook_name, kwargs):
            if type(returned) is list and not returned:  # most rules find nothing
                continue
            error = returned if isinstance(returned, Exception) else None
            if error is None:
                try:
                    out += _findings_of(returned, name)
                    continue
                except Exception as exc:  # not findings (or a generator rule that raised)
                    error = exc
            # a plugin bug (or RecursionError): report it, never crash
            log.error("rule %s failed", name, exc_info=error)
            out.append(self._rule_error(name, error))
        return out

    def _rule_error(self, name: str, exc: Exception) -> Finding:
        closed = name in FAIL_CLOSED_RULES or self.ctx.settings.on_rule_error == "block"
        return Finding(
            "GUARD.RULE_ERROR",
            Severity.ERROR if closed else Severity.WARNING,
            f"rule {name} failed"
            + (", so the query is blocked" if closed else " and was skipped")
            + f": {exc!r}. Simplify the query",
            (0, 0),
            rule=name,
        )


def _has_error(findings: Sequence[Finding]) -> bool:
    """Is any of `findings` an error? (No generator for the common empty list: hot path.)"""
    return bool(findings) and any(f.severity is Severity.ERROR for f in findings)


def _findings_of(result: Any, plugin: str) -> list[Finding]:
    """The findings a rule returned (a list or other iterable of `Finding`), tagged with the
    rule's name; anything else is the rule's bug (a TypeError naming what it returned)."""
    if type(result) is not list:
        if isinstance(result, Finding | str | bytes) or not isinstance(result, Iterable):
            raise TypeError(f"returned {type(result).__name__}, not a list of Finding")
        result = list(result)
    out = []
    for finding in result:
        if not isinstance(finding, Finding):
            raise TypeError(f"returned a {type(finding).__name__} among its findings")
        out.append(finding if finding.rule else finding.with_span(finding.span, plugin))
    return out


# ---------------------------------------------------------------- edits and spans


def _facts(lang: Language, parsed: Any) -> tuple[bool, str]:
    """(explain, query type) of the final parse (the rules' edits never change either)."""
    if lang.statement is None or parsed is None:
        return False, ""
    return lang.statement(parsed)


def _select_edits(findings: Iterable[Finding]) -> list[Edit]:
    """The edits of every fix that does not overlap an earlier fix (a fix is all-or-nothing)."""
    chosen: list[Edit] = []
    for f in findings:
        if not f.fix:
            continue
        # (most fixes are one edit, the first one chosen: no generator then)
        if chosen and any(e.overlaps(c) for e in f.fix for c in chosen):
            continue
        if len(f.fix) > 1 and any(a is not b and a.overlaps(b) for a in f.fix for b in f.fix):
            continue
        chosen.extend(f.fix)
    return chosen


def _fix_in(f: Finding, edits: Sequence[Edit]) -> bool:
    return bool(f.fix) and all(e in edits for e in f.fix or ())


def _applied(findings: list[Finding], edits: list[Edit]) -> list[Finding]:
    return [f for f in findings if _fix_in(f, edits)]


def _map_back(pos: int, edits: Sequence[Edit], is_end: bool) -> int:
    """Map an offset in the text after `edits` to the text before them: a position inside
    replacement text maps to the replaced region's start (or end, for an end offset)."""
    delta = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        new_start = e.start + delta
        new_end = new_start + len(e.replacement)
        if pos <= new_start:
            break
        if pos < new_end:
            return e.end if is_end else e.start
        delta += len(e.replacement) - (e.end - e.start)
    return pos - delta


def _map_findings(findings: Iterable[Finding], history: list[list[Edit]]) -> list[Finding]:
    if not history:  # no edits applied yet: the spans are the original's
        return list(findings)
    out = []
    for f in findings:
        start, end = f.span
        for edits in reversed(history):
            start, end = _map_back(start, edits, False), _map_back(end, edits, True)
        out.append(f if (start, end) == f.span else f.with_span((start, max(start, end))))
    return out


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple[str, tuple[int, int], str]] = set()
    out = []
    for f in findings:
        key = (f.code, f.span, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
