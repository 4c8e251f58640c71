print("tapedeck")
