"""Every setting and timing, read once from the environment: the durations (config/durations.py,
scaled by TIME_SCALE) and the variables (config/settings.py), parsed by config/parsing.py."""

from config.durations import TIMING_ENV, Timings
from config.parsing import SettingError
from config.settings import (
    HERE,
    READ_ELSEWHERE,
    Settings,
    load_settings,
    load_timings,
    traces_requested,
    with_instance,
)

__all__ = [
    "HERE",
    "READ_ELSEWHERE",
    "TIMING_ENV",
    "SettingError",
    "Settings",
    "Timings",
    "load_settings",
    "load_timings",
    "traces_requested",
    "with_instance",
]
