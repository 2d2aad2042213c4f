"""The rules explained to players: what each variant's options mean and why a warning was
raised, in German, English and Romanian, with the German rule text's own sentence behind
each where the text has one.

The texts are data files beside this module (package data), read once by :func:`rule_texts`:

* ``de.json``, ``en.json``, ``ro.json``, one per language: ``options`` (variant -> option
  -> ``label`` in plain words, ``help`` in a sentence or two, and for an option whose
  choices are words a ``choices`` label each), ``warnings`` (code -> ``title`` and
  ``explanation``) and ``variant_warnings`` (variant -> code -> ``explanation``, where a
  game's own rule says it differently: its opening minimum, its melds).
* ``quotes.json``, the same in every language: ``sources`` (variant -> its rule text,
  ``rules/<file>.de.txt`` in the shared rule folder), ``options`` (variant -> option -> the
  text's sentence, null for a pure house rule) and ``warnings`` (variant -> code -> the
  sentence of the rule the warning enforces; absent where the text has none).  Quotes are
  verbatim; a quote of passages that do not follow one another joins them, in the text's
  order, with :data:`QUOTE_JOINER`.

The warning codes are the engine's turn problems (``TurnProblem.code``, listed in
:mod:`tabletop.engine.turn_common`) and the live game's own (``live/game.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

Language = Literal["de", "en", "ro"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
QUOTE_JOINER = " … "
"""Between the passages of one quote that lie apart in the rule text."""
FOLDER = Path(__file__).resolve().parent


class TextsError(ValueError):
    """Text files that do not fit together (a language missing a code the others have)."""


@dataclass(frozen=True)
class OptionText:
    label: str
    help: str
    choices: Mapping[str, str] | None
    """A label per choice, for options whose choices are words."""
    quote: str | None


@dataclass(frozen=True)
class WarningText:
    title: str
    explanation: str
    quote: str | None


@dataclass(frozen=True)
class _Option:
    label: str
    help: str
    choices: Mapping[str, str] | None


@dataclass(frozen=True)
class _Language:
    options: Mapping[str, Mapping[str, _Option]]
    warnings: Mapping[str, tuple[str, str]]
    variant_warnings: Mapping[str, Mapping[str, str]]


class RuleTexts:
    """Typed access to the texts; build with :meth:`load` (or take :func:`rule_texts`)."""

    def __init__(
        self,
        languages: Mapping[Language, _Language],
        sources: Mapping[str, str],
        option_quotes: Mapping[str, Mapping[str, str | None]],
        warning_quotes: Mapping[str, Mapping[str, str]],
    ) -> None:
        self._languages = languages
        self._sources = sources
        self._option_quotes = option_quotes
        self._warning_quotes = warning_quotes
        english = languages["en"]
        self.warning_codes: tuple[str, ...] = tuple(english.warnings)
        """Every code explained, turn problems first, in the files' order."""
        for lang, texts in languages.items():
            if tuple(texts.warnings) != self.warning_codes:
                missing = set(self.warning_codes) ^ set(texts.warnings)
                raise TextsError(f"{lang}.json explains other warnings than en.json: {missing}")
            for variant_id, options in english.options.items():
                if set(texts.options.get(variant_id, {})) != set(options):
                    raise TextsError(f"{lang}.json names other options of {variant_id}")

    @classmethod
    def load(cls, folder: Path = FOLDER) -> RuleTexts:
        languages = {lang: _language(_read(folder / f"{lang}.json")) for lang in LANGUAGES}
        quotes = _read(folder / "quotes.json")
        return cls(
            languages,
            {str(k): str(v) for k, v in quotes["sources"].items()},
            {
                str(variant): {str(name): _text_or_none(q) for name, q in options.items()}
                for variant, options in quotes["options"].items()
            },
            {
                str(variant): {str(code): str(q) for code, q in codes.items()}
                for variant, codes in quotes["warnings"].items()
            },
        )

    def variants(self) -> tuple[str, ...]:
        return tuple(self._sources)

    def source(self, variant_id: str) -> str | None:
        """The variant's rule text, ``rules/<file>.de.txt``."""
        return self._sources.get(variant_id)

    def option(self, variant_id: str, name: str, lang: Language) -> OptionText | None:
        """None where the files do not explain the option."""
        text = self._languages[lang].options.get(variant_id, {}).get(name)
        if text is None:
            return None
        quote = self._option_quotes.get(variant_id, {}).get(name)
        return OptionText(text.label, text.help, text.choices, quote)

    def option_quote(self, variant_id: str, name: str) -> str | None:
        return self._option_quotes.get(variant_id, {}).get(name)

    def warning(self, variant_id: str, code: str, lang: Language) -> WarningText | None:
        """The warning as the variant's rule words it; None for a code the files lack."""
        texts = self._languages[lang]
        general = texts.warnings.get(code)
        if general is None:
            return None
        title, explanation = general
        explanation = texts.variant_warnings.get(variant_id, {}).get(code, explanation)
        return WarningText(title, explanation, self.warning_quote(variant_id, code))

    def warning_quote(self, variant_id: str, code: str) -> str | None:
        return self._warning_quotes.get(variant_id, {}).get(code)

    def quotes(self) -> list[tuple[str, str, str]]:
        """Every quote as (variant, option or warning code, quote), for checking them."""
        found = [
            (variant, name, quote)
            for variant, options in self._option_quotes.items()
            for name, quote in options.items()
            if quote is not None
        ]
        found += [
            (variant, code, quote)
            for variant, codes in self._warning_quotes.items()
            for code, quote in codes.items()
        ]
        return found


@cache
def rule_texts() -> RuleTexts:
    """The shipped texts, read on first use and kept."""
    return RuleTexts.load()


def _read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise TextsError(f"{path.name} holds {type(data).__name__}, not an object")
    return data


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _language(data: Mapping[str, Any]) -> _Language:
    return _Language(
        options={
            str(variant): {
                str(name): _Option(
                    str(text["label"]),
                    str(text["help"]),
                    {str(k): str(v) for k, v in text["choices"].items()}
                    if "choices" in text
                    else None,
                )
                for name, text in options.items()
            }
            for variant, options in data["options"].items()
        },
        warnings={
            str(code): (str(text["title"]), str(text["explanation"]))
            for code, text in data["warnings"].items()
        },
        variant_warnings={
            str(variant): {str(code): str(text["explanation"]) for code, text in codes.items()}
            for variant, codes in data["variant_warnings"].items()
        },
    )
