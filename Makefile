# spark_eos_connect — every target installs what it needs first; `make help` lists them.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
export EOSCONNECT_JARS_DIR ?= $(CURDIR)/.jars
export PYSPARK_PYTHON := $(CURDIR)/$(PY)

.PHONY: help setup postgres jars demo test test-times test-cluster test-failover unit integration lint bench docs dist clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev,docs]"
	touch $@

$(EOSCONNECT_JARS_DIR)/.fetched: $(VENV)/.installed $(wildcard spark_eos_connect/jvm/*-pom.xml)
	$(PY) -m spark_eos_connect.jvm.jars
	touch $@

# The driver JVM's class data sharing archive (spark/class_archive.py): retrained when the
# venv or the jars change; the module itself skips the training when its archive exists.
$(EOSCONNECT_JARS_DIR)/.class-archive: $(VENV)/.installed $(EOSCONNECT_JARS_DIR)/.fetched
	$(PY) -m spark_eos_connect.spark.class_archive_training
	touch $@

# The JVM task host (java/task-host, issue 46): its jar and runtime dependencies, where
# spark_eos_connect/jvm_tasks/classpath.py finds them.
TASK_HOST := java/task-host
TASK_HOST_JARS := $(EOSCONNECT_JARS_DIR)/task-host
$(TASK_HOST_JARS)/.built: $(TASK_HOST)/pom.xml $(shell find $(TASK_HOST)/src/main -name '*.java' 2>/dev/null)
	mvn -q -B -f $(TASK_HOST)/pom.xml package -DskipTests
	rm -rf $(TASK_HOST_JARS) && mkdir -p $(TASK_HOST_JARS)
	cp $(TASK_HOST)/target/task-host.jar $(TASK_HOST_JARS)/
	mvn -q -B -f $(TASK_HOST)/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(abspath $(TASK_HOST_JARS))
	touch $@

# This project's own Connect plugins for the tests (java/test-plugins, issue 46), in a plugin
# folder of their own: tests/integration/java_test_plugins.py.
TEST_PLUGINS := java/test-plugins
TEST_PLUGINS_JARS := $(EOSCONNECT_JARS_DIR)/test-plugins
$(TEST_PLUGINS_JARS)/.built: $(TEST_PLUGINS)/pom.xml $(shell find $(TEST_PLUGINS)/src/main -name '*.java' 2>/dev/null)
	mvn -q -B -f $(TEST_PLUGINS)/pom.xml package
	rm -rf $(TEST_PLUGINS_JARS) && mkdir -p $(TEST_PLUGINS_JARS)/eos-test-plugins
	cp $(TEST_PLUGINS)/target/eos-test-plugins.jar $(TEST_PLUGINS_JARS)/eos-test-plugins/
	touch $@

setup: postgres $(VENV)/.installed $(EOSCONNECT_JARS_DIR)/.fetched $(EOSCONNECT_JARS_DIR)/.class-archive $(TASK_HOST_JARS)/.built $(TEST_PLUGINS_JARS)/.built ## venv, Python packages, Kafka, Delta and plugin jars, the JVM task host and the test plugins, the driver's class archive, PostgreSQL (idempotent)

# The PostgreSQL server package the tests' throwaway clusters run from (testing/postgres.py),
# installed only where no initdb is found (EOSCONNECT_PG_BIN names another install).
PG_PACKAGE ?= postgresql-15
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
postgres: ## PostgreSQL's server package for the tests (apt-get, only where initdb is missing)
	@if [ -n "$$EOSCONNECT_PG_BIN" ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	else $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(PG_PACKAGE); fi

jars: $(EOSCONNECT_JARS_DIR)/.fetched ## fetch the Kafka broker, Kafka Connect (with Debezium's PostgreSQL connector and Connect's file connectors as plugins) and Delta jars from Maven Central

demo: setup ## start a local broker and run the demo job end to end
	$(PY) jobs/demo.py

TEST_WORKERS ?= 2

test: setup ## the JVM task host's JUnit tests, then unit and integration tests against a real local broker, Spark cluster and Delta
	mvn -q -B -f $(TASK_HOST)/pom.xml test
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25

test-times: setup ## make test's pytest run with each test's time appended to test-times.tsv as it ends (readable mid-run), then the 30 slowest files
	rm -f test-times.tsv
	EOSCONNECT_TEST_TIMES=$(CURDIR)/test-times.tsv $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup -q; \
	status=$$?; $(PY) tests/slowest_files.py test-times.tsv; exit $$status

test-cluster: setup ## only the tests on the Spark standalone cluster (master + two workers)
	$(PY) -m pytest -m cluster tests/integration/cluster

CAMPAIGNS := tests/integration/failover tests/integration/connectors/postgres/cdc/test_postgres_cdc_crash_recovery.py \
	tests/integration/source/test_source_crash_recovery.py tests/integration/source/test_source_broker_restart.py \
	tests/integration/sink/test_delta_crash_recovery.py \
	tests/integration/sink/test_postgres_sink_query.py tests/integration/cluster/test_failures_on_cluster.py \
	tests/integration/cluster/test_sink_tasks_on_cluster.py \
	tests/integration/jvm_tasks/test_java_debezium_crash_recovery.py \
	tests/integration/jvm_tasks/test_java_connector_transactions.py
test-failover: setup ## the kill campaigns' long form: 3 broker kills and a driver kill per failover query, every crash point of the CDC, source, Delta and PostgresSink crash tests and of the Java Debezium and test-plugin campaigns (driver, task host and JVM task host kills), two executor kills per cluster kill test, the single broker's restart under a source query
	EOSCONNECT_FAILOVER=full $(PY) -m pytest -s $(CAMPAIGNS)

unit: setup ## unit tests only (no broker, no Spark)
	$(PY) -m pytest tests/unit

integration: setup ## integration tests only
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup tests/integration

lint: setup ## ruff and mypy
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: setup $(VENV)/.bench-installed ## records/s vs the limit, Kafka Connect's EOS worker, Spark's Kafka source (BENCH_ARGS=--quick: short)
	$(PY) jobs/bench.py

$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -q -e ".[bench]"
	touch $@

dist: setup ## build the wheel and the sdist into dist/ (PEP 517: python -m build)
	rm -rf dist
	$(PY) -m build --outdir dist .

docs: setup ## regenerate the options reference page, then build the site into site/ (warnings are errors)
	$(PY) -m spark_eos_connect.apps.docs --write docs/options.md
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

clean: ## remove the venv, jar cache and build leftovers
	rm -rf $(VENV) $(EOSCONNECT_JARS_DIR) dist build .mypy_cache .ruff_cache .pytest_cache *.egg-info spark-warehouse metastore_db derby.log .demo site
