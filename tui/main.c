/* main.c: collscope-tui, the terminal browser as a program of its own. */
#include "config.h"
#include "tui/tui.h"

int main(int argc, char **argv)
{
    return cs_tui_main(argc, argv);
}
