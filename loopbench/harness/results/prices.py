"""Price tables: USD per million input, cached-input, cache-write and output tokens, per model.

A run's cost prices each kind of token at its own rate: the input neither read from nor
written to the prompt cache at ``input``, cache reads at ``cached_input``, cache writes at
``cache_write``, and every output token (reasoning included) at ``output``. A model listed
without a cached-input or cache-write rate pays the input rate for those tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from loopbench.harness.errors import BadInput
from loopbench.harness.files import read_toml, toml_problems

if TYPE_CHECKING:
    import numpy as np

DEFAULT_PRICES = Path(__file__).with_name("prices.toml")


class PriceError(BadInput):
    pass


#: The highest price taken, USD per million tokens: far above any provider's, and
#: low enough that a cost stays finite (at 1e308 every cost was infinite).
MAX_PRICE = 1e6


def _at_most_max(price: float) -> float:
    if price > MAX_PRICE:
        raise PydanticCustomError(
            "price_too_high",
            f"{price:g} is more than {MAX_PRICE:.0f} USD per million tokens, the most a "
            "price may be",
        )
    return price


#: USD per million tokens: finite, from 0 to ``MAX_PRICE``.
Rate = Annotated[float, Field(ge=0, allow_inf_nan=False), AfterValidator(_at_most_max)]
#: A share of the full rates: above 0, at most 1.
Discount = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    input: Rate
    cached_input: Rate | None = None
    output: Rate
    cache_write: Rate | None = None
    """Input tokens written to the prompt cache (Anthropic's cache writes, 1.25 times the
    input rate for five minutes); the input rate when absent."""
    as_of: str | None = None
    """When these rates were read, where not the table's own date."""
    batch: Discount | None = None
    """What a batched call's tokens cost, as a share of these rates (OpenAI's and
    Anthropic's batches: 0.5); the table's ``batch`` when absent, else the full rates."""

    def cost(
        self, tokens_in: int, tokens_out: int, tokens_cached: int = 0, tokens_cache_write: int = 0
    ) -> float:
        cached_rate, write_rate = self._share_rates()
        uncached = max(0, tokens_in - tokens_cached - tokens_cache_write)
        return (
            uncached * self.input
            + tokens_cached * cached_rate
            + tokens_cache_write * write_rate
            + tokens_out * self.output
        ) / 1e6

    def costs(
        self,
        tokens_in: np.ndarray[Any, Any],
        tokens_out: np.ndarray[Any, Any],
        tokens_cached: np.ndarray[Any, Any],
        tokens_cache_write: np.ndarray[Any, Any],
    ) -> np.ndarray[Any, Any]:
        """``cost`` of each run's tokens at once, in the same arithmetic."""
        cached_rate, write_rate = self._share_rates()
        uncached = (tokens_in - tokens_cached - tokens_cache_write).clip(min=0)
        cost: np.ndarray[Any, Any] = (
            uncached * self.input
            + tokens_cached * cached_rate
            + tokens_cache_write * write_rate
            + tokens_out * self.output
        ) / 1e6
        return cost

    def _share_rates(self) -> tuple[float, float]:
        """The cache-read and cache-write rates: the input rate where the table has none."""
        cached = self.input if self.cached_input is None else self.cached_input
        return cached, self.input if self.cache_write is None else self.cache_write


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    as_of: str = "unknown"
    batch: Discount | None = None
    models: dict[str, Price]


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, Price]
    as_of: str = "unknown"
    source: str = ""
    batch: float | None = None
    """The batch share of every model that gives none of its own (``Price.batch``)."""

    def batch_share(self, price: Price) -> float:
        """What a batched call's tokens cost at ``price``, as a share of its full rates."""
        if price.batch is not None:
            return price.batch
        return self.batch if self.batch is not None else 1.0

    def find(self, model: str) -> Price | None:
        """The price of ``model``, or of the longest listed name it starts with
        (``gpt-4o-mini-2024-07-18`` is priced as ``gpt-4o-mini``), or of the name after its
        provider's prefix (``anthropic/claude-sonnet-4`` as ``claude-sonnet-4``)."""
        if model in self.models:
            return self.models[model]
        prefixes = [name for name in self.models if model.startswith(name)]
        if not prefixes and "/" in model:  # a provider's prefix: anthropic/claude-sonnet-4
            return self.find(model.partition("/")[2])
        return self.models[max(prefixes, key=len)] if prefixes else None

    def dated(self, models: Iterable[str]) -> str:
        """When the prices of ``models`` were read: one date, or each model's where they
        differ (``2025-08-07 (gpt-5), 2025-11-15 (claude-sonnet-4-5)``)."""
        dates = {}
        for model in sorted(models):
            price = self.find(model)
            if price is not None:
                dates[model] = price.as_of or self.as_of
        if len(set(dates.values())) <= 1:
            return next(iter(dates.values()), self.as_of)
        return ", ".join(f"{date} ({model})" for model, date in dates.items())

    def require(self, model: str) -> Price:
        price = self.find(model)
        if price is None:
            raise PriceError(
                f"no price for {model!r} in {self.source or 'the price table'}; "
                f"listed: {', '.join(sorted(self.models))}. Add it to a table passed with --prices."
            )
        return price


PRICES_EXAMPLE = 'as_of = "2025-08-01" and [models."gpt-5-mini"] input = 0.25, output = 2.0'


def load_prices(path: Path | str | None = None) -> PriceTable:
    """The table in ``path`` (the shipped one by default); a ``PriceError`` naming the file,
    line and field otherwise. TOML values are typed: ``input = "0.25"`` is refused."""
    source = Path(path) if path else DEFAULT_PRICES
    expected = f"a TOML price table (USD per million tokens), e.g. {PRICES_EXAMPLE}"
    data, text = read_toml(source, PriceError, expected)
    try:
        table = _PriceFile.model_validate(data, strict=True)
    except ValidationError as exc:
        raise PriceError(
            f"{toml_problems(source, text, exc)}; each model needs input and output, "
            f"USD per million tokens, e.g. {PRICES_EXAMPLE}"
        ) from None
    return PriceTable(table.models, table.as_of, str(source), table.batch)
