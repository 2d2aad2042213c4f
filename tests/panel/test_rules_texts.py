"""The rule explanations (panel/texts/) and GET /api/variants/{id}/rules: every option of
every variant and every warning the engine or the live game raises is explained in German,
English and Romanian, and every quote is the rule text's own words."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tabletop.engine.variants import VARIANTS
from tabletop.live import events as live_events
from tabletop.live.game import MATERIAL_PROBLEMS
from tabletop.panel.app import create_app
from tabletop.panel.settings import PanelSettings
from tabletop.panel.texts import LANGUAGES, QUOTE_JOINER, rule_texts

PANEL_URL = "http://127.0.0.1:8765"
REPO = Path(__file__).resolve().parents[2]
RULES = next(
    (folder for folder in (REPO.parent / "shared" / "rules", Path("/work/shared/rules"))
     if folder.is_dir()),
    None,
)
"""The German rule texts the quotes come from (beside the checkout)."""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("rules-panel")
    config = PanelSettings(database_url=f"sqlite:///{folder / 'panel.db'}")
    with TestClient(create_app(config), base_url=PANEL_URL) as client:
        yield client


# --- which codes there are: read from the code that raises them --------------------
def _turn_problem_codes() -> set[str]:
    """Every code a ``TurnProblem(...)`` of the engine's turn judges is made with (string
    literals, including both arms of a conditional), and those its docstring lists."""
    codes: set[str] = set()
    for path in sorted((REPO / "engine").glob("turn*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "TurnProblem":
                first: ast.AST = node.args[0] if node.args else next(
                    k.value for k in node.keywords if k.arg == "code")
                if isinstance(first, ast.Name):
                    first = _assigned(path, first.id)
                codes |= {c.value for c in ast.walk(first)
                          if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    docstring = (REPO / "engine" / "turn_common.py").read_text()
    listed = re.search(r'``code`` is a short machine id:(.*?)"""', docstring, re.S)
    assert listed is not None
    codes |= set(re.findall(r"``([a-z_]+)``", listed.group(1)))
    return codes


def _assigned(path: Path, name: str) -> ast.AST:
    """The expression last assigned to ``name`` in ``path`` (a code chosen before the call)."""
    values = [node.value for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
    assert values, f"no assignment to {name} in {path.name}"
    return ast.Module(body=[ast.Expr(v) for v in values], type_ignores=[])


def _live_warning_codes() -> set[str]:
    """The codes ``Game._warn`` is called with as literals; the others are the engine's
    turn problems and the material problems it passes on."""
    codes: set[str] = set()
    tree = ast.parse((REPO / "live" / "game.py").read_text())
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "_warn"):
            code = node.args[2]
            if isinstance(code, ast.Constant):
                codes.add(str(code.value))
            elif isinstance(code, ast.Name) and code.id.endswith("_CODE"):
                codes.add(str(getattr(live_events, code.id)))  # a code named in live/events.py
            else:
                assert ast.unparse(code) == "problem.code", ast.unparse(code)
    return codes | set(MATERIAL_PROBLEMS)


def test_the_codes_are_found_in_the_code() -> None:
    turn, live = _turn_problem_codes(), _live_warning_codes()
    assert {"initial_too_low", "invalid_meld", "discard_used_for_opening"} <= turn
    assert {"end_turn_ignored", "out_refused", "hand_refused", "unreadable_meld", "penalty",
            "too_many_copies"} <= live
    assert len(turn) >= 28


def test_every_warning_is_explained_in_every_language() -> None:
    texts = rule_texts()
    codes = _turn_problem_codes() | _live_warning_codes()
    assert not codes - set(texts.warning_codes), "codes without a text"
    assert not set(texts.warning_codes) - codes, "texts for codes nothing raises"
    for variant_id in VARIANTS:
        for code in codes:
            for lang in LANGUAGES:
                warning = texts.warning(variant_id, code, lang)
                assert warning is not None, (variant_id, code, lang)
                assert warning.title.strip() and len(warning.explanation) > len(warning.title)


def test_every_option_of_every_variant_is_explained_in_every_language() -> None:
    texts = rule_texts()
    assert set(texts.variants()) == set(VARIANTS)
    for variant_id, cls in VARIANTS.items():
        assert texts.source(variant_id) is not None
        for spec in cls.option_specs:
            seen = {}
            for lang in LANGUAGES:
                text = texts.option(variant_id, spec.name, lang)
                assert text is not None, (variant_id, spec.name, lang)
                assert text.label.strip() and text.help.strip()
                # one or two sentences
                assert 1 <= len(re.findall(r"[.!?](\s|$)", text.help)) <= 3, text.help
                words = spec.choices and all(isinstance(c, str) for c in spec.choices)
                if words:
                    assert text.choices is not None
                    assert set(text.choices) == set(spec.choices or ()), (variant_id, spec.name)
                seen[lang] = text.help
            # really translated, not copied
            assert len(set(seen.values())) == len(LANGUAGES), (variant_id, spec.name)


def test_each_opening_warning_names_its_variants_minimum() -> None:
    texts = rule_texts()
    for variant_id, minimum in (("sabra", "30"), ("rummikub-american", "21"),
                                ("rummikub-international", "50"), ("remi", "50"),
                                ("rommee", "40"), ("raeuber", "40")):
        for lang in LANGUAGES:
            warning = texts.warning(variant_id, "initial_too_low", lang)
            assert warning is not None and minimum in warning.explanation, (variant_id, lang)
        quote = texts.warning_quote(variant_id, "initial_too_low")
        assert quote is not None and minimum in quote
    remi = texts.warning_quote("remi", "initial_too_low")
    assert remi is not None and "45" in remi and "Folge" in remi
    for lang in LANGUAGES:
        assert "45" in texts.warning("remi", "initial_too_low", lang).explanation  # type: ignore[union-attr]
    assert texts.warning_quote("wiener", "initial_too_low") is None


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(RULES is None, reason="the rule texts (shared/rules) are not here")
def test_every_quote_is_verbatim_in_its_rule_text() -> None:
    texts = rule_texts()
    quotes = texts.quotes()
    assert len(quotes) > 100
    for variant_id, where, quote in quotes:
        source = texts.source(variant_id)
        assert source is not None and source.startswith("rules/")
        assert RULES is not None
        rule_text = _normalised((RULES / source.removeprefix("rules/")).read_text())
        position = 0
        # passages joined by the joiner are quoted in the order the text has them
        for passage in quote.split(QUOTE_JOINER):
            found = rule_text.find(_normalised(passage), position)
            assert found >= 0, f"{variant_id} {where}: not in {source}: {passage!r}"
            position = found + len(_normalised(passage))


def test_house_rules_have_no_quote_and_the_texts_rules_do() -> None:
    texts = rule_texts()
    # the text gives no value for International's unmelded joker
    assert texts.option_quote("rummikub-international", "joker_penalty") is None
    assert "mindesten 30" in (texts.warning_quote("sabra", "initial_too_low") or "")
    assert "drei Spielsteine" in (texts.warning_quote("sabra", "penalty") or "")
    assert "45 Punkte" in (texts.option_quote("remi", "initial_meld") or "")
    assert "K–A–2" in (texts.option_quote("rommee", "ace_around") or "")


def test_romanian_is_written_with_its_own_letters() -> None:
    texts = rule_texts()
    romanian = " ".join(
        f"{t.title} {t.explanation}"
        for variant_id in VARIANTS for code in texts.warning_codes
        if (t := texts.warning(variant_id, code, "ro")) is not None
    )
    romanian += " ".join(
        f"{o.label} {o.help}"
        for variant_id, cls in VARIANTS.items() for spec in cls.option_specs
        if (o := texts.option(variant_id, spec.name, "ro")) is not None
    )
    # s and t with a comma below, not the cedilla of older Turkish-derived fonts
    assert "ş" not in romanian and "ţ" not in romanian
    assert "Ş" not in romanian and "Ţ" not in romanian
    for letter in "ăâîșț":
        assert letter in romanian
    assert "deschidere" in romanian


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_rules_of_every_variant_are_served_per_language(
    client: TestClient, lang: str
) -> None:
    codes = set(rule_texts().warning_codes)
    for variant_id, cls in VARIANTS.items():
        response = client.get(f"/api/variants/{variant_id}/rules", params={"lang": lang})
        assert response.status_code == 200, response.text
        rules = response.json()
        assert rules["id"] == variant_id and rules["name"] == cls.name and rules["lang"] == lang
        assert rules["source"].startswith("rules/") and rules["source"].endswith(".de.txt")
        assert [o["name"] for o in rules["options"]] == [s.name for s in cls.option_specs]
        for option, spec in zip(rules["options"], cls.option_specs, strict=True):
            assert option["default"] == spec.default
            assert option["choices"] == (list(spec.choices) if spec.choices else None)
            assert option["label"] and option["help"]
            assert option["quote"] == rule_texts().option_quote(variant_id, spec.name)
        assert set(rules["warnings"]) == codes
        for warning in rules["warnings"].values():
            assert warning["title"] and warning["explanation"]


def test_the_languages_differ_and_the_quotes_do_not(client: TestClient) -> None:
    answers = {lang: client.get("/api/variants/sabra/rules", params={"lang": lang}).json()
               for lang in LANGUAGES}
    titles = {lang: answers[lang]["warnings"]["initial_too_low"]["title"] for lang in LANGUAGES}
    assert titles == {"de": "Erstmeldung zu niedrig", "en": "Opening too low",
                      "ro": "Deschidere prea mică"}
    quotes = {answers[lang]["warnings"]["initial_too_low"]["quote"] for lang in LANGUAGES}
    assert len(quotes) == 1 and "mindesten 30" in quotes.pop()
    freed = {lang: next(o for o in answers[lang]["options"] if o["name"] == "freed_joker")
             for lang in LANGUAGES}
    assert freed["de"]["choice_labels"]["anywhere"] == "irgendwo auf dem Tisch"
    assert freed["ro"]["choice_labels"]["new_group"] == "într-o formație nouă"
    # English without a language asked for
    assert client.get("/api/variants/sabra/rules").json()["lang"] == "en"


@pytest.mark.parametrize("path", ["/api/variants/poker/rules", "/api/variants/sabra/rules?lang=fr"])
def test_an_unknown_variant_or_language_is_refused(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 422


def test_the_texts_are_package_data() -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"tabletop.panel.texts" = ["*.json"]' in pyproject
    shipped = {path.name for path in (REPO / "panel" / "texts").glob("*.json")}
    assert shipped == {"de.json", "en.json", "ro.json", "quotes.json"}
