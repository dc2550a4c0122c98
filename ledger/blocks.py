"""The text blocks an agent is shown, shaped here and nowhere else.

The compiler (`ledger.context`) joins them under its headings; the services count their tokens when a
row is written, so the compiler never tokenises again. Every value inside a block came from an agent
or a file and passes through `ledger.untrusted` first: a title or a name is one line, a content is a
block whose further lines are indented under its item, and no line of it can open a heading, a quote
or a `**Label:**` line of ours.
"""

from __future__ import annotations

from ledger.models import Decision, MemoryType, Session, Source
from ledger.untrusted import block, clean, one_line


def decision_block(decision: Decision) -> str:
    """One boundary as it appears under '## Boundaries and Decisions'."""
    return decision_text(
        decision.title, decision.type, decision.agent.name, decision.content, decision.rationale
    )


def decision_text(title: str, type_: str, agent: str, content: str, rationale: str) -> str:
    lines = [f"### {one_line(title)}", f"**Type:** {type_} | **Decided by:** {one_line(agent)}"]
    content = block(content)
    if content:
        lines.append(content)
    rationale = block(rationale)
    if rationale:
        lines.append(f"> **Rationale:** {rationale}")
    return "\n".join(lines)


def session_block(session: Session) -> str:
    """The body of '## Current Session' (without its heading); empty lines left out."""
    lines = []
    focus_area = block(session.focus_area)
    if focus_area:
        lines.append(f"**Focus:** {focus_area}")
    issues = [issue for issue in map(one_line, session.active_issues) if issue]
    if issues:
        lines.append(f"**Active issues:** {', '.join(issues)}")
    summary = block(session.summary)
    if summary:
        lines.append(f"**Summary:** {summary}")
    return "\n".join(lines)


def memory_line(*, type_: str, content: str, own: bool, agent_name: str) -> str:
    """One memory under '## Memory': its content under the bullet, further lines indented."""
    if type_ == MemoryType.CORE_CONTEXT:
        label = "core"
    elif own:
        label = type_
    else:
        label = f"{type_} from {one_line(agent_name)}"
    return f"- [{label}] {block(content)}"


def relevant_memory_line(*, type_: str, content: str, own: bool, agent_name: str, source: str) -> str:
    """One memory under '## Relevant Past Knowledge': `[session summary]` for a closed session's
    summary, `[core]` or its type for the agent's own, `[type from Name]` for another agent's."""
    if source == Source.SESSION_SUMMARY:
        label = "session summary" if own else f"session summary from {one_line(agent_name)}"
    elif own:
        label = "core" if type_ == MemoryType.CORE_CONTEXT else type_
    else:
        label = f"{type_} from {one_line(agent_name)}"
    return f"- [{label}] {block(content)}"


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


def session_block_cut(session: Session, left_out: int) -> str:
    """The body of '## Current Session' with the summary's first (oldest) `left_out` non-blank lines
    left out and a note saying how many; the focus and the active issues stay whole."""
    if left_out <= 0:
        return session_block(session)
    summary = [line for line in clean(session.summary).split("\n") if line.strip()]
    kept = Session(focus_area=session.focus_area, active_issues=session.active_issues, summary="")
    lines = [session_block(kept)] if session_block(kept) else []
    note = f"**Summary:** ({min(left_out, len(summary))} earlier lines left out)"
    rest = block("\n".join(summary[left_out:]))
    lines.append(note + ("\n  " + rest if rest else ""))
    return "\n".join(lines)
