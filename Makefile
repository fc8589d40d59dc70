# SPDX-License-Identifier: GPL-2.0
#
# Build the out-of-tree modules against a Rust-enabled 7.3 kernel build:
#   make KDIR=<kernel build dir>            (LLVM=-19 etc. as the kernel was built)
#   make KDIR=<kernel build dir> CLIPPY=1   (also run clippy)
# scripts/build-modules.sh does this inside the project's build root.

KDIR ?= /lib/modules/$(shell uname -r)/build

all: modules

modules modules_install clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $@

.PHONY: all modules modules_install clean
