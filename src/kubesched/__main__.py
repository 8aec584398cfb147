from kubesched.cmd.main import main

main()
