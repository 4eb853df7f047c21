// A recorder header that reaches into the report: the layer check must fail on this one too.
#pragma once
#include "qprof/report/report.hpp"
