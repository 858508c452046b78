"""The scoring profiles: which definitions a published rule and its metrics use.

``reference`` reproduces the publication's code (the default everywhere); ``corrected`` applies
srtui's named corrections (README "Fidelity: where srtui's corrected variants differ from the
reference code"). A metric's corrected variant is stored as ``NAME:corrected`` beside ``NAME``.
Kept out of ``srtui.results.scoring`` so the metric workers can name it without importing pandas.
"""

from __future__ import annotations

from enum import StrEnum


class Profile(StrEnum):
    REFERENCE = "reference"
    CORRECTED = "corrected"

    def metric(self, name: str) -> str:
        """``name`` as stored under this profile: itself (reference) or ``name:corrected``."""
        return name if self is Profile.REFERENCE else f"{name}:{self.value}"


#: the profiles in the order the CLI and the app list them (the default first)
PROFILES: tuple[Profile, ...] = tuple(Profile)


def named_profile(value: object) -> Profile | None:
    """``value`` (a CLI option's text) as a profile; None when it names none: the rule's own option
    check (``Rule.resolve``) reports that, with the rule's name."""
    return Profile(value) if isinstance(value, str) and value in PROFILES else None
