"""What every settings section shares: the error, the field declaration that carries a setting's
public name and help, and the address parsers sections validate with."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import Field, dataclass, field, fields
from typing import Any, ClassVar, get_args, get_type_hints

from evigate.rules.errors import EvigateError


class ConfigError(EvigateError, ValueError):
    """A setting has a value this service cannot use; the message names it."""


def setting(default: Any = None, help: str = "", *, name: str = "", secret: bool = False) -> Any:
    """A section field. `name` overrides the public name (section prefix + field name); a secret
    has no flag (command lines show in `ps`) and is masked in `describe()`."""
    metadata = {"name": name, "help": help, "secret": secret}
    if callable(default):
        return field(default_factory=default, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Section:
    """A frozen dataclass of one part of the settings. Every field is one public setting: the flag
    `--<name with dashes>`, the variable `EVIGATE_<NAME>` and the config-file key `<name>`, where
    the name is PREFIX + the field's name unless the field names itself."""

    PREFIX: ClassVar[str] = ""

    def validate(self) -> None:
        """Raises ConfigError naming the first setting this section cannot use."""

    @classmethod
    def public_names(cls) -> Iterator[tuple[str, Field[Any]]]:
        for f in fields(cls):
            yield (f.metadata.get("name") or cls.PREFIX + f.name), f


def positive(section: Section, *names: str) -> None:
    """Each named field must be > 0; the message names the public setting."""
    public = {f.name: name for name, f in section.public_names()}
    for field_name in names:
        if getattr(section, field_name) <= 0:
            raise ConfigError(f"{public[field_name]} must be positive")


def choice(section: Section, *names: str) -> None:
    """Each named field must be one of its `Literal` type's values (a config file or the
    environment can hold anything); the message names the public setting."""
    public = {f.name: name for name, f in section.public_names()}
    hints = get_type_hints(type(section))
    for field_name in names:
        one_of(public[field_name], getattr(section, field_name), get_args(hints[field_name]))


def one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    """`value` of the setting `name` must be one of `allowed`."""
    if value not in allowed:
        expected = " or ".join(allowed) if len(allowed) == 2 else f"one of {', '.join(allowed)}"
        raise ConfigError(f"{name}: expected {expected}, got {value!r}")


def split_host_port(address: str, setting: str = "listen") -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"{setting}: expected HOST:PORT, got {address!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


def web_address(web: str) -> tuple[str, int]:
    """The viewer's bind address: `PORT` or `:PORT` alone binds to loopback, never to every interface."""
    text = web.strip()
    if text.isdigit():
        text = f":{text}"
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"web: expected HOST:PORT, got {web!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def mask_url(url: str) -> str:
    """`scheme://user:secret@host` → `scheme://user:***@host`."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user, colon, password = credentials.partition(":")
    return f"{scheme}://{user}{':***' if colon and password else colon}@{host}"
