"""Which torch the checked code runs on: the `torch-version` setting, else the project's pin, else
the torch of the user's environment (read from metadata, never imported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmend import settings as settings_module
from graphmend.settings import installed_torch_version, pinned_torch_version, settings_for


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("requirements.txt", "numpy>=1.24\ntorch==2.9.1\n", (2, 9)),
        ("requirements.txt", "torch ~= 2.10.0  # pinned for the cluster\n", (2, 10)),
        ("requirements.txt", "torch>=2.4\n", None),  # a range is no pin
        ("requirements.txt", "torchvision==0.24.1\n", None),
        ("pyproject.toml", '[project]\nname = "m"\ndependencies = ["torch[opt]==2.11.0"]\n', (2, 11)),
        (
            "pyproject.toml",
            '[project]\nname = "m"\n[project.optional-dependencies]\ngpu = ["torch==2.12.1"]\n',
            (2, 12),
        ),
        ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = "2.9.1"\n', (2, 9)),
        ("pyproject.toml", "[project\n", None),  # invalid TOML: no pin, no crash
    ],
)
def test_the_projects_pin(tmp_path: Path, name: str, text: str, expected: tuple[int, int] | None) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "pkg").mkdir()
    assert pinned_torch_version(tmp_path / "pkg" / "model.py") == expected


def test_the_setting_wins_over_the_pin_and_an_edit_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.9.1\n")
    assert settings_for(tmp_path).torch_version == (2, 9)
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\ntorch-version = "2.13"\n')
    assert settings_for(tmp_path).torch_version == (2, 13)
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "requirements.txt").write_text("torch==2.14.1\n# edited\n")
    assert settings_for(tmp_path).torch_version == (2, 14)


def test_the_active_environments_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "torch-2.9.1+cu128.dist-info").mkdir(parents=True)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))
    settings_module.installed_torch_version.cache_clear()
    try:
        assert installed_torch_version() == (2, 9)
    finally:
        settings_module.installed_torch_version.cache_clear()


def test_settings_are_read_once_per_folder_until_a_file_they_come_from_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: one settings cache, one policy, for the CLI, the editor and its workers alike."""
    reads: list[Path] = []
    real_load = settings_module.load_pyproject

    def counting_load(path: Path) -> settings_module.Settings:
        reads.append(path)
        return real_load(path)

    monkeypatch.setattr(settings_module, "load_pyproject", counting_load)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.graphmend]\nselect = ["GM1"]\n')
    (tmp_path / "pkg").mkdir()
    for _ in range(3):
        assert settings_for(tmp_path / "pkg" / "model.py").select == ("GM1",)
    assert reads == [pyproject]
    pyproject.write_text('[tool.graphmend]\nselect = ["GM2", "GM3"]\n')
    assert settings_for(tmp_path / "pkg" / "model.py").select == ("GM2", "GM3")
    (tmp_path / "pkg" / "requirements.txt").write_text("torch==2.9.1\n")  # a nearer file appears
    assert settings_for(tmp_path / "pkg" / "model.py").torch_version == (2, 9)
    assert len(reads) == 3
