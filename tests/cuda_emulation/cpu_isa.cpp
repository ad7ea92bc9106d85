// The CPU build choice (the drop-in's CPU backend asks it whether torch and myops fuse alike).
#include "core/cpu_isa.cpp"
