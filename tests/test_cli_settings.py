"""The command line's defaults and help are the library's, written once (ADR 0017).

Each clone option of ``analyze`` and ``worker`` that sets something of an adapter or
of the use case reads its default (and, for an adapter's, its help) from the settings
type that owns it; these tests fail when the two drift apart, and check that what the
flags give reaches the adapters.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
import typer

import clonegate
import clonegate.cluster
from clonegate import AnalysisSettings, CloneSettings, UseCaseConfig, parse_size
from clonegate.store import StoreSettings
from clonegate_cli._clone_options import CloneFlags
from clonegate_cli._flag_groups import hints_of
from clonegate_cli.app import app

# Each command-line field, and the library field whose default it shows: (type, field,
# how the command line writes that value).
_SIZE = parse_size
_SAME: dict[str, tuple[type, str, object]] = {
    "read_timeout": (CloneSettings, "read_timeout", float),
    "connect_timeout": (CloneSettings, "connect_timeout", float),
    "depth": (CloneSettings, "depth", lambda v: v or None),  # 0: all, None in the library
    "max_repo_size": (CloneSettings, "max_repo_size", _SIZE),
    "clone_memory": (CloneSettings, "max_memory", _SIZE),
    "low_speed_limit": (CloneSettings, "low_speed_limit", int),
    "low_speed_time": (CloneSettings, "low_speed_time", float),
    "ca_bundle": (CloneSettings, "ca_bundle", lambda v: v),
    "analysis_memory": (AnalysisSettings, "max_memory", _SIZE),
    "jobs": (UseCaseConfig, "max_concurrent_clones", int),
    "timeout": (UseCaseConfig, "repository_timeout", float),
    "analysis_timeout": (UseCaseConfig, "analysis_time_limit", float),
    "retries": (UseCaseConfig, "retries", int),
    "retry_timeouts": (UseCaseConfig, "retry_timeouts", bool),
    "breaker": (UseCaseConfig, "breaker_threshold", int),
    "breaker_cool_down": (UseCaseConfig, "breaker_cool_down", float),
}


def _cli_fields() -> dict[str, dataclasses.Field[object]]:
    return {f.name: f for f in dataclasses.fields(CloneFlags)}


def _option(name: str) -> typer.models.OptionInfo:
    """The Typer option declared for the command-line field ``name``."""
    hints = hints_of(CloneFlags)
    (option,) = (m for m in hints[name].__metadata__ if isinstance(m, typer.models.OptionInfo))
    return option


@pytest.mark.parametrize("name", sorted(_SAME))
def test_each_cli_default_is_the_library_default(name: str) -> None:
    owner, field, read = _SAME[name]
    cli = _cli_fields()[name].default
    assert read(cli) == getattr(owner(), field)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("name", "owner", "field"),
    [(n, o, f) for n, (o, f, _) in sorted(_SAME.items()) if o is not UseCaseConfig],
)
def test_each_adapter_option_shows_the_help_its_settings_give(
    name: str, owner: type, field: str
) -> None:
    library = next(f for f in dataclasses.fields(owner) if f.name == field).metadata["help"]
    assert _option(name).help == library


def test_every_settings_field_has_one_help_text() -> None:
    for settings in (CloneSettings, AnalysisSettings):
        for field in dataclasses.fields(settings):
            assert field.metadata.get("help"), f"{settings.__name__}.{field.name}"


def test_the_ssh_command_shows_the_librarys_default() -> None:
    assert f"[default: {CloneSettings().ssh_command}]" in str(_option("ssh_command").help)


def test_the_flags_reach_the_adapters_settings(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("")
    flags = dataclasses.replace(
        CloneFlags(),
        depth=0,
        read_timeout=7.0,
        connect_timeout=3.0,
        max_repo_size="5M",
        clone_memory="64M",
        analysis_memory="32M",
        low_speed_limit=10,
        low_speed_time=2.0,
        ssh_command="ssh -i key",
        ca_bundle=ca,
    )
    setup = flags.setup(typer.Context(typer.main.get_command(app)))
    assert setup.clone == CloneSettings(
        depth=None,
        read_timeout=7.0,
        connect_timeout=3.0,
        max_repo_size=5 << 20,
        max_memory=64 << 20,
        low_speed_limit=10,
        low_speed_time=2.0,
        ssh_command="ssh -i key",
        ca_bundle=ca,
    )
    assert setup.analysis == AnalysisSettings(max_memory=32 << 20)
    # The use case gets only its own options.
    config = UseCaseConfig.of(setup.options)
    assert (config.max_concurrent_clones, config.repository_timeout) == (2, 15 * 60.0)
    assert config.retries == UseCaseConfig().retries
    assert not any(name.startswith("with_clone_depth") for name in clonegate.__all__)


def test_the_cache_size_option_is_the_stores_setting() -> None:
    from clonegate_cli._store_options import CACHE_SIZE
    from clonegate_cli._typer_options import CacheSizeOption

    assert parse_size(CACHE_SIZE) == StoreSettings(Path("x")).cache_limit
    metadata = typing.get_args(CacheSizeOption)[1:]
    (option,) = (m for m in metadata if isinstance(m, typer.models.OptionInfo))
    library = next(f for f in dataclasses.fields(StoreSettings) if f.name == "cache_limit")
    assert str(option.help).endswith(library.metadata["help"][1:])


@pytest.mark.parametrize(("incremental", "force"), [(False, False), (True, False), (True, True)])
def test_the_store_flags_reach_the_composition(
    tmp_path: Path, incremental: bool, force: bool
) -> None:
    from clonegate_cli._setup import Setup
    from clonegate_cli._store_options import StoreFlags, with_store

    flags = StoreFlags.of(tmp_path / "r.db", incremental, force, "64M")
    setup = with_store(flags, Setup())
    assert setup.store == StoreSettings(tmp_path / "r.db", 64 << 20)
    assert setup.analysis.refresh_cache is force
    assert UseCaseConfig.of(setup.options).incremental is (incremental and not force)
    assert with_store(None, Setup()) == Setup()


def test_the_worker_options_are_the_cluster_settings() -> None:
    import inspect

    from clonegate_cli import _cluster

    worker = inspect.signature(_cluster.worker).parameters
    cluster = clonegate.cluster.ClusterSettings()
    assert worker["lease"].default == cluster.lease
    assert worker["claim_idle"].default == cluster.claim_idle
    expected = (
        inspect.signature(clonegate.cluster.ClusterWorker).parameters["max_deliveries"].default
    )
    assert worker["max_deliveries"].default == expected
    # The adapters' own defaults are the same figures, read from the settings.
    semaphore = inspect.signature(clonegate.cluster.RedisSemaphore).parameters["lease"].default
    queue = inspect.signature(clonegate.cluster.RedisWorkQueue).parameters["claim_idle"].default
    assert (semaphore, queue) == (cluster.lease, cluster.claim_idle)
    assert str(_cluster._LEASE_HELP) == help_of_cluster("lease")


def help_of_cluster(name: str) -> str:
    field = next(f for f in dataclasses.fields(clonegate.cluster.ClusterSettings) if f.name == name)
    return str(field.metadata["help"])


def test_the_retries_flag_reaches_the_use_case() -> None:
    flags = dataclasses.replace(CloneFlags(), retries=0)
    setup = flags.setup(typer.Context(typer.main.get_command(app)))
    assert UseCaseConfig.of(setup.options).retries == 0


def test_the_retry_and_breaker_flags_reach_the_use_case() -> None:
    flags = dataclasses.replace(CloneFlags(), retry_timeouts=True, breaker=0, breaker_cool_down=2.5)
    config = UseCaseConfig.of(flags.setup(typer.Context(typer.main.get_command(app))).options)
    assert (config.retry_timeouts, config.breaker_threshold, config.breaker_cool_down) == (
        True,
        0,
        2.5,
    )
