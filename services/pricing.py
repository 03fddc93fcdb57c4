"""Token totals of stored usage objects and their estimated cost from a price table (pure).

Prices are US dollars per million tokens, per model: `input`, `output`, `cache_write_5m`,
`cache_write_1h` and `cache_read`; cache prices left out follow Anthropic's multipliers of
the input price (1.25x, 2x, 0.1x). The defaults are the model table's (engine/upstream/
catalog.py), the one place prices are kept. A model takes the entry whose key equals its
name, else the longest key its name contains, so family names ("sonnet") price every dated
version.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from engine.upstream.catalog import prices as catalog_prices
from engine.upstream.estimate import billed_usage

__all__ = [
    "DEFAULT_PRICES",
    "TOKEN_FIELDS",
    "Prices",
    "cost",
    "price_for",
    "price_table",
    "summarize",
]

Prices = dict[str, dict[str, Decimal]]

# The one table of models (engine/upstream/catalog.py): each model's row, then families.
DEFAULT_PRICES: dict[str, dict[str, float]] = catalog_prices()
CACHE_MULTIPLIERS = {
    "cache_write_5m": Decimal("1.25"),
    "cache_write_1h": Decimal("2"),
    "cache_read": Decimal("0.1"),
}
PRICE_FIELDS = ("input", "output", *CACHE_MULTIPLIERS)
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
MILLION = Decimal(1_000_000)
MICRO_DOLLAR = Decimal("0.000001")


def price_table(overrides: Mapping[str, Any] | None = None) -> Prices:
    """Return the default prices with `overrides` (MODEL_PRICES) replacing whole entries."""
    entries: dict[str, Any] = {**DEFAULT_PRICES, **(overrides or {})}
    table: Prices = {}
    for model, entry in entries.items():
        if not isinstance(entry, Mapping) or "input" not in entry or "output" not in entry:
            raise ValueError(f"MODEL_PRICES[{model!r}] needs at least 'input' and 'output'")
        unknown = set(entry) - set(PRICE_FIELDS)
        if unknown:
            raise ValueError(f"MODEL_PRICES[{model!r}] has unknown fields {sorted(unknown)}")
        prices = {name: _amount(model, name, entry[name]) for name in entry}
        for name, times in CACHE_MULTIPLIERS.items():
            prices.setdefault(name, prices["input"] * times)
        table[model.lower()] = prices
    return table


def _amount(model: str, name: str, value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"MODEL_PRICES[{model!r}][{name!r}] must be a number")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"MODEL_PRICES[{model!r}][{name!r}] must be a number >= 0")
    return amount


def price_for(model: str | None, table: Prices) -> dict[str, Decimal] | None:
    """Return the prices of `model`: its own entry, else the longest key it contains."""
    if not model:
        return None
    name = model.lower()
    if name in table:
        return table[name]
    matches = [key for key in table if key in name]
    return table[max(matches, key=len)] if matches else None


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cost(usage: Mapping[str, Any], prices: Mapping[str, Decimal]) -> Decimal:
    """Return the dollars one usage object costs at `prices`."""
    written = _count(usage, "cache_creation_input_tokens")
    split = usage.get("cache_creation")
    hour = _count(split, "ephemeral_1h_input_tokens") if isinstance(split, Mapping) else 0
    hour = min(hour, written)
    per_million = (
        _count(usage, "input_tokens") * prices["input"]
        + _count(usage, "output_tokens") * prices["output"]
        + (written - hour) * prices["cache_write_5m"]
        + hour * prices["cache_write_1h"]
        + _count(usage, "cache_read_input_tokens") * prices["cache_read"]
    )
    return per_million / MILLION


def summarize(
    rows: Iterable[tuple[str | None, Mapping[str, Any] | None]], table: Prices
) -> dict[str, Any]:
    """Return `usage` totals and the estimated `cost` of (model, usage) rows."""
    totals = dict.fromkeys(TOKEN_FIELDS, 0)
    dollars, calls, unpriced = Decimal(0), 0, set()
    for model, usage in rows:
        if not isinstance(usage, Mapping):
            continue
        # A compacted reply's compaction iteration is billed but not in its top-level fields.
        usage = billed_usage(dict(usage)) or usage
        calls += 1
        for key in TOKEN_FIELDS:
            totals[key] += _count(usage, key)
        prices = price_for(model, table)
        if prices is None:
            unpriced.add(model or "unknown")
        else:
            dollars += cost(usage, prices)
    return {
        "usage": {**totals, "total_tokens": sum(totals.values()), "model_calls": calls},
        "cost": {
            "currency": "USD",
            "amount": str(dollars.quantize(MICRO_DOLLAR)),
            "unpriced_models": sorted(unpriced),
        },
    }
