"""A refused form's errors where they belong: each field's beside it, the form's own at its top.

A field in error says so to assistive technology (`aria-invalid`, `aria-describedby` naming its
error), and the form's first field in error takes the focus when the page opens (`autofocus`, which
works without JavaScript and after an htmx swap). A form refused for a reason of its own (the ledger's
rule, not a field's shape) focuses its first field, described by that reason.

    {% load form_errors %}
    {% form_errors form "edit" %}
    <label>Title <input name="title"{% invalid_attrs form.title "edit" %}></label>
    {% field_errors form.title "edit" %}
"""

from __future__ import annotations

from django import forms, template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def _error_id(prefix: str, name: str) -> str:
    return f"{prefix}-{name}-error"


def _form_error_id(prefix: str) -> str:
    return f"{prefix}-errors"


def _focused(form: forms.BaseForm) -> str | None:
    """The name of the field that takes the focus: the first one in error, else, when only the form
    itself was refused, its first field; None for a form without errors."""
    if not form.is_bound or not form.errors:
        return None
    in_error = [name for name in form.fields if name in form.errors]
    return in_error[0] if in_error else next(iter(form.fields), None)


@register.simple_tag
def invalid_attrs(field: forms.BoundField, prefix: str) -> SafeString:
    """The attributes of a field's control that say it was refused, and why; "" when it was not."""
    form = field.form
    focused = _focused(form)
    described = []
    if field.errors:
        described.append(_error_id(prefix, field.name))
    if focused == field.name and form.non_field_errors():
        described.append(_form_error_id(prefix))
    attrs = []
    if field.errors:
        attrs.append(' aria-invalid="true"')
    if described:
        attrs.append(format_html(' aria-describedby="{}"', " ".join(described)))
    if focused == field.name:
        attrs.append(" autofocus")
    return mark_safe("".join(attrs))  # every part is a constant or built by format_html


@register.simple_tag
def field_errors(field: forms.BoundField, prefix: str) -> SafeString:
    """The field's errors, beside it, under the id its control is described by; "" when none."""
    if not field.errors:
        return mark_safe("")
    return format_html(
        '<span class="field-error" id="{}">{}</span>',
        _error_id(prefix, field.name),
        " ".join(str(error) for error in field.errors),
    )


@register.simple_tag
def form_errors(form: forms.BaseForm, prefix: str) -> SafeString:
    """The form's own refusals (the ledger's rules), at the top of the form; "" when none."""
    errors = form.non_field_errors() if form.is_bound else []
    if not errors:
        return mark_safe("")
    return format_html(
        '<p class="message error form-error" id="{}" role="alert">{}</p>',
        _form_error_id(prefix),
        format_html_join(" ", "{}", ((str(error),) for error in errors)),
    )
