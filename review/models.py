"""What the dashboard keeps for a person rather than for a project: how dense they like the inbox.

A person's display choices are not the ledger's business: they are not audited and no agent sees them.
They belong to the user, not to a browser session, so they follow the reviewer to another browser.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import models
from django.db.models import Q


class Density(models.TextChoices):
    """How much of the inbox fits on a screen: comfortable rows, or compact ones for long queues."""

    COMFORTABLE = "comfortable", "Comfortable"
    COMPACT = "compact", "Compact"


class Preference(models.Model):
    """One user's dashboard choices (one row a user, made when they first choose)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_preference"
    )
    density = models.CharField(max_length=12, choices=Density.choices, default=Density.COMFORTABLE)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(density__in=Density.values), name="review_preference_density_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.density}"


def density_of(user: AbstractBaseUser | AnonymousUser) -> str:
    """The user's chosen density, comfortable until they choose (one query)."""
    chosen = Preference.objects.filter(user_id=user.pk or 0).values_list("density", flat=True).first()
    return chosen or Density.COMFORTABLE


def choose_density(user: AbstractBaseUser | AnonymousUser, density: str) -> None:
    """Remember `density` for `user`, in every browser they sign in from."""
    Preference.objects.update_or_create(user_id=user.pk, defaults={"density": density})
