"""Tell English questions from Spanish, German, French or other-script ones, by common words."""

from __future__ import annotations

import re

from demo_model.vocabulary import fold


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words common in questions about money in each language, accents folded ("gasté" -> "gaste").
# Words that are also English ("was", "die", "me", "son") are left out of the other languages,
# and so are articles, which merchant names carry ("Le Comptoir du Relais").
WORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "how much many did do does i spend spent spending what my the on at in last this month "
        "year week is are was were show me and for of to a which where when get got any have "
        "has budget budgets balance balances account accounts money income earn earned refunds "
        "with from vs versus than compare biggest largest purchases"
    ),
    "es": _words(
        "cuanto cuanta cuantos gaste gasto gastado gastos gastar mes pasado en "
        "mis mi que cual cuales saldo saldos cuenta cuentas ingresos este esta ano semana y "
        "para por con como donde hola gracias dinero reembolsos presupuesto tengo he gane "
        "restaurantes comida supermercado viaje"
    ),
    "de": _words(
        "wie viel viele habe ich hab letzten letzte monat fur ausgegeben hoch mein meine meinen "
        "im ist sind und mit auf kontostand konto konten einkommen gehalt geld diesen "
        "dieses jahr hallo danke wo welche wieviel lebensmittel "
        "ruckerstattungen verdient"
    ),
    "fr": _words(
        "combien ai je j depense depenses depensee en mois dernier derniere quel "
        "quelle quels est solde soldes mes mon ma comptes compte revenus revenu salaire cette "
        "annee pour avec et bonjour merci salut argent remboursements courses gagne "
        "suis"
    ),
}
# Letters of scripts other than Latin: Greek, Cyrillic, Arabic, Hebrew, Indic, CJK...
OTHER_SCRIPT = re.compile(r"[\u0370-\u1fff\u3040-\u9fff\uac00-\ud7af]")


def language_of(question: str) -> str:
    """Return "en", "es", "de", "fr", or "other" for a non-Latin script."""
    if OTHER_SCRIPT.search(question):
        return "other"
    words = re.findall(r"[a-z]+", fold(question))
    english = sum(w in WORDS["en"] for w in words)
    scores = {code: sum(w in known for w in words) for code, known in WORDS.items() if code != "en"}
    best = max(scores, key=lambda code: scores[code])
    score = scores[best]
    if score > english and (score >= 2 or english == 0):
        return best
    return "en"
