// The CPU build choice (the drop-in's CPU backend asks it whether torch and myops fuse alike).
#include "cpu/cpu_isa.cpp"
