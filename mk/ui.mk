# The web page's browser test: headless Chromium (Debian's chromium package, installed when
# missing) drives the page against a real AM and TaskManagers. Screenshots of every tab land
# in build/ui-test/_artifacts/<n>/. The page itself has no build step: web/assets is what
# the AM serves.
UI_TEST_DIR := $(CURDIR)/$(BUILD_DIR)/ui-test
APT_GET := $(if $(filter 0,$(shell id -u)),,sudo) apt-get

.PHONY: ui-test ui-screenshot

ui-test:
	@command -v chromium >/dev/null || { echo "==> installing chromium (Debian package)"; \
		$(APT_GET) install -y chromium || { $(APT_GET) update && $(APT_GET) install -y chromium; }; }
	@rm -rf $(UI_TEST_DIR) && mkdir -p $(UI_TEST_DIR)
	TIDE_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run 'TestWebPageInBrowser' -artifacts -outputdir $(UI_TEST_DIR) -v ./test/e2e/

# Refreshes the README's picture of the rescale timeline from a run of the browser test.
ui-screenshot: ui-test
	cp "$$(ls -t $(UI_TEST_DIR)/_artifacts/*/rescale-timeline.png | head -1)" docs/rescale-timeline.png
