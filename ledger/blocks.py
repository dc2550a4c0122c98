"""The text blocks an agent is shown, shaped here and nowhere else.

The compiler (`ledger.context`) joins them under its headings; the services count their tokens when a
row is written, so the compiler never tokenises again. Every value inside a block came from an agent
or a file and passes through `ledger.untrusted` first: a title or a name is one line (a name inside
one of our `[…]` labels with its brackets escaped), a content is a block whose further lines are
indented under its item, and nothing in it can open a heading, a quote, a `**Label:**` line of ours, a
code block, an HTML block, a rule or a link definition (docs/compiler.md, "Untrusted text").
"""

from __future__ import annotations

from datetime import date

from ledger.models import Decision, MemoryType, Session, Source
from ledger.untrusted import block, clean, heading, one_line


def decision_block(decision: Decision) -> str:
    """One boundary as it appears under '## Boundaries and Decisions'."""
    return decision_text(
        decision.title, decision.type, decision.agent.name, decision.content, decision.rationale
    )


def decision_text(title: str, type_: str, agent: str, content: str, rationale: str) -> str:
    lines = [f"### {heading(title)}", f"**Type:** {type_} | **Decided by:** {one_line(agent)}"]
    content = block(content)
    if content:
        lines.append(content)
    rationale = block(rationale)
    if rationale:
        lines.append(f"> **Rationale:** {rationale}")
    return "\n".join(lines)


def labelled(name: str) -> str:
    """A name inside one of Canon's `[…]` labels: one line, its brackets and backslashes escaped, so
    that no name can close the label early (`Bob]: /x "t"` would make the item a link definition)."""
    return one_line(name).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _by(names: str | list[str], verb: str) -> str:
    """`[set by alice] ` / `[written by alice, bob] `: who wrote a session field, before its text; empty
    when nobody is recorded (sessions written before writers were kept)."""
    names = [names] if isinstance(names, str) else names
    shown = ", ".join(labelled(name) for name in names if name.strip())
    return f"[{verb} by {shown}] " if shown else ""


def session_block(session: Session, *, issues_left_out: int = 0) -> str:
    """The body of '## Current Session' (without its heading); empty lines left out. Every value is
    shown with who wrote it: every agent of the project reads it. With `issues_left_out`, that many
    of the last active issues are left out, and a note says so."""
    lines = []
    focus_area = block(session.focus_area)
    if focus_area:
        lines.append(f"**Focus:** {_by(session.focus_by, 'set')}{focus_area}")
    issues = [issue for issue in map(one_line, session.active_issues) if issue]
    if issues_left_out:
        kept = len(issues) - min(issues_left_out, len(issues))
        issues = [*issues[:kept], f"({len(issues) - kept} more left out)"]
    if issues:
        lines.append(f"**Active issues:** {_by(session.issues_by, 'set')}{', '.join(issues)}")
    summary = block(session.summary)
    if summary:
        lines.append(f"**Summary:** {_by(session.summary_by, 'written')}{summary}")
    return "\n".join(lines)


def memory_line(*, type_: str, content: str, own: bool, agent_name: str) -> str:
    """One memory under '## Memory': its content under the bullet, further lines indented."""
    if type_ == MemoryType.CORE_CONTEXT:
        label = "core"
    elif own:
        label = type_
    else:
        label = f"{type_} from {labelled(agent_name)}"
    return f"- [{label}] {block(content)}"


def relevant_memory_line(
    *, type_: str, content: str, own: bool, agent_name: str, source: str, written_by: str = ""
) -> str:
    """One memory under '## Relevant Past Knowledge': `[session summary written by Name, Name]` for a
    closed session's summary (kept by the coordinator agent, written by whoever wrote the session),
    `[core]` or its type for the agent's own, `[type from Name]` for another agent's."""
    if source == Source.SESSION_SUMMARY:
        writers = labelled(written_by)
        label = f"session summary written by {writers}" if writers else "session summary"
    elif own:
        label = "core" if type_ == MemoryType.CORE_CONTEXT else type_
    else:
        label = f"{type_} from {labelled(agent_name)}"
    return f"- [{label}] {block(content)}"


def relevant_decision_line(
    *, type_: str, agent_name: str, decided: date, title: str, content: str, rationale: str
) -> str:
    """One active decision under '## Relevant Past Knowledge': what it is and who decided it when
    (`[decision, technical, by Marlow, 2026-03-02]`), its title and content on the item's line, then
    its rationale on an indented line of its own; further lines are indented deeper. A content that
    only repeats the title is left out."""
    label = f"decision, {type_}, by {labelled(agent_name)}, {decided.isoformat()}"
    title = one_line(title)
    content = block(content, indent="    ") if one_line(content) != title else ""
    text = f"{title}: {content}" if title and content else title or content
    lines = [f"- [{label}] {text}".rstrip(" ")]
    rationale = block(rationale, indent="    ")
    if rationale:
        lines.append(f"  Rationale: {rationale}")
    return "\n".join(lines)


def episode_line(*, outcome: str, tried: str, difficulties: str, feedback: str) -> str:
    """One of the agent's own past runs under '## Relevant Past Knowledge': what it tried on the item's
    line, then its difficulties and its own feedback, each on an indented line of its own whose
    further lines are indented deeper."""
    lines = [f"- [episode, {one_line(outcome)}] {block(tried, indent='    ')}"]
    difficulties = block(difficulties, indent="    ")
    if difficulties:
        lines.append(f"  Difficulties: {difficulties}")
    feedback = block(feedback, indent="    ")
    if feedback:
        lines.append(f"  Feedback: {feedback}")
    return "\n".join(lines)


def session_block_cut(session: Session, left_out: int, *, issues_left_out: int = 0) -> str:
    """The body of '## Current Session' with the summary's first (oldest) `left_out` non-blank lines
    left out and a note saying how many (and, with `issues_left_out`, the last issues too)."""
    if left_out <= 0:
        return session_block(session, issues_left_out=issues_left_out)
    summary = [line for line in clean(session.summary).split("\n") if line.strip()]
    kept = Session(
        focus_area=session.focus_area,
        active_issues=session.active_issues,
        focus_by=session.focus_by,
        issues_by=session.issues_by,
    )
    head = session_block(kept, issues_left_out=issues_left_out)
    lines = [head] if head else []
    note = (
        f"**Summary:** {_by(session.summary_by, 'written')}"
        f"({min(left_out, len(summary))} earlier lines left out)"
    )
    rest = block("\n".join(summary[left_out:]), own_line=True)
    lines.append(note + ("\n" + rest if rest else ""))
    return "\n".join(lines)
