"""Module-scoped fixtures of the viewer tests: one served world and one headless Chromium each."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

from tests.web.world import ViewerWorld

TOKEN = "viewer-test-token"
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium and chromium-driver (scripts/debian-test-packages.txt)
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerWorld]:
    served = ViewerWorld(tmp_path_factory.mktemp("viewer"), tokens=(TOKEN,))
    yield served
    served.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1400,1000")
    options.add_argument("--lang=en-US")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # CSP violations are console errors
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
