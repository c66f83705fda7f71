# `sam build` through SAM's makefile build method (template.yaml: Metadata BuildMethod makefile, ContextPath .).
# For each function SAM runs `make --makefile <this file> build-<LogicalId>` in a scratch copy of the function's
# CodeUri (functions/<module>) with ARTIFACTS_DIR set to .aws-sam/build/<LogicalId>; what the target leaves
# there is the function's deployment package. Paths below start at this file's directory, whatever the working
# directory.
#
# Lambda's Java runtime puts lib/*.jar on the classpath, so the package is the module's shaded jar in lib/.

ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
MODULES := order-created payment-notify timeout-sweep stream-consumer compensation admin
# Extra Maven flags, e.g. `make ... MVNFLAGS=-o` to build offline.
MVNFLAGS ?=

# One Maven run builds all six jars (shared is compiled once, not six times); its stamp is newer than every
# source afterwards, so the other five targets, and any later `sam build` without a source change, only copy.
# No tests here: `./mvnw verify` (CI) is the gate, `sam build` only packages what it checked.
STAMP := $(ROOT)/target/sam-build.stamp
SOURCES := $(ROOT)/pom.xml $(shell find $(ROOT)/shared $(addprefix $(ROOT)/functions/,$(MODULES)) \
	-name target -prune -o -type f -path '*/src/main/*' -print -o -type f -name pom.xml -print)

# `sam build --parallel` starts the six targets at once: flock (util-linux) lets one Maven run build while
# the others wait and then find the stamp fresh. Without flock, build sequentially (SAM's default).
LOCK := $(if $(shell command -v flock 2>/dev/null),flock $(ROOT)/target/sam-build.lock,)
JARS = @mkdir -p $(ROOT)/target && $(LOCK) $(MAKE) --no-print-directory --makefile $(ROOT)/Makefile jars

.PHONY: jars clean-sam-build $(addprefix build-,OrderCreatedFunction PaymentNotifyFunction \
	TimeoutSweepFunction StreamConsumerFunction CompensationFunction AdminFunction PreTrafficHook)

jars: $(STAMP)

$(STAMP): $(SOURCES)
	cd $(ROOT) && ./mvnw -B -ntp -q $(MVNFLAGS) -DskipTests -Djacoco.skip=true \
		-pl functions/order-created,functions/payment-notify,functions/timeout-sweep,functions/stream-consumer,functions/compensation,functions/admin \
		-am package
	touch $@

# $(1): the module under functions/ whose shaded jar becomes the package.
define copy-jar
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: run this target through `sam build`))
	rm -rf $(ARTIFACTS_DIR)/lib
	mkdir -p $(ARTIFACTS_DIR)/lib
	cp $(ROOT)/functions/$(1)/target/$(1)-lambda.jar $(ARTIFACTS_DIR)/lib/
endef

build-OrderCreatedFunction:
	$(JARS)
	$(call copy-jar,order-created)

build-PaymentNotifyFunction:
	$(JARS)
	$(call copy-jar,payment-notify)

build-TimeoutSweepFunction:
	$(JARS)
	$(call copy-jar,timeout-sweep)

build-StreamConsumerFunction:
	$(JARS)
	$(call copy-jar,stream-consumer)

build-CompensationFunction:
	$(JARS)
	$(call copy-jar,compensation)

build-AdminFunction:
	$(JARS)
	$(call copy-jar,admin)

# The pre-traffic hook is one Python file with no dependency beyond the runtime's boto3: copied as it is,
# so `sam build` needs no local Python (its own Python builder would want the runtime's version on the PATH).
build-PreTrafficHook:
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: run this target through `sam build`))
	cp $(ROOT)/infra/hooks/pre-traffic/index.py $(ARTIFACTS_DIR)/

clean-sam-build:
	rm -rf $(ROOT)/.aws-sam $(STAMP)
