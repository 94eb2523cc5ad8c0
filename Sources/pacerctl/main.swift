// pacerctl: Pacer's command-line tool. Everything is in PacerCtlCommands, which pacerd links too.
import PacerCtlCommands

PacerCtlMain.main()
