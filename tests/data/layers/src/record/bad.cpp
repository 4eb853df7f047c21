// A recorder that draws its own chart: record/ may not use plot/, so the layer check must fail.
#include "qprof/record/sampler.hpp"
#include "qprof/plot/chart.hpp"
