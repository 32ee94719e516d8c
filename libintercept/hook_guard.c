#include "hook_guard.h"

GW_TLS int gw_in_hook;
