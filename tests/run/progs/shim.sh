#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A pyenv-style shim: becomes its arguments (exec), nothing else.
exec "$@"
