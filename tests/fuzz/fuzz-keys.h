/*
 * HPN patch set: fixed keys of the early_client and early_server
 * harnesses (made once with ssh-keygen -N '' for these harnesses only):
 * the server's host keys (Ed25519; RSA 2048, the key type a client that
 * has no server KEXINIT yet expects: kex->hostkey_type 0) and the user's
 * (Ed25519; RSA 2048).  Fixed, so that an input gives the same run in
 * any process.
 */
#ifndef HPN_FUZZ_KEYS_H
#define HPN_FUZZ_KEYS_H

static const char fz_key_host_ed25519[] =
	"-----BEGIN OPENSSH PRIVATE KEY-----\n"
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
	"QyNTUxOQAAACAug8SLsxWiq9T5VUWE9mFILyp+UqpCX8pqaY587QsIagAAAJgeWoK7HlqC\n"
	"uwAAAAtzc2gtZWQyNTUxOQAAACAug8SLsxWiq9T5VUWE9mFILyp+UqpCX8pqaY587QsIag\n"
	"AAAEAAenTGt2WhmlH38pObH2rItwcI6HEOVqklkT2rjqFD6S6DxIuzFaKr1PlVRYT2YUgv\n"
	"Kn5SqkJfymppjnztCwhqAAAAFWhwbi1mdXp6LWhvc3RfZWQyNTUxOQ==\n"
	"-----END OPENSSH PRIVATE KEY-----\n";

static const char fz_key_host_rsa[] =
	"-----BEGIN OPENSSH PRIVATE KEY-----\n"
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABFwAAAAdzc2gtcn\n"
	"NhAAAAAwEAAQAAAQEAzhiBpRYNpnhluebzGDXuYezHxYdskuI/jFwyJnsDUGzY6Kw7QqbU\n"
	"0m+eRRk2D/nHzbnc/bMdv7ZTl67j0n2B2GBYQQ9KQcpW9tVjf7Jy0EYuPHq4jQDLjRobfI\n"
	"WK2fnkYg7ZGnzuqusPqJzStJ147MCPasZSNF6rs/J7lAGNnDqDh9CzjpCgeJKbUK3iua7P\n"
	"tRZDzxhq6BDCJjzYmSOVThM8aDpgoyO4CpNGkCLW0YT23izxa3tmrTPwuWM7MtJYJjh6+R\n"
	"h8/hy64qrd3DqQqbWI/7Sl/jcNLHlBE6XpVHX2/eoDXiwc5GUya04MhSvRt01Z7m81xF1j\n"
	"IIlYb1cx/wAAA8ifsBzXn7Ac1wAAAAdzc2gtcnNhAAABAQDOGIGlFg2meGW55vMYNe5h7M\n"
	"fFh2yS4j+MXDImewNQbNjorDtCptTSb55FGTYP+cfNudz9sx2/tlOXruPSfYHYYFhBD0pB\n"
	"ylb21WN/snLQRi48eriNAMuNGht8hYrZ+eRiDtkafO6q6w+onNK0nXjswI9qxlI0Xquz8n\n"
	"uUAY2cOoOH0LOOkKB4kptQreK5rs+1FkPPGGroEMImPNiZI5VOEzxoOmCjI7gKk0aQItbR\n"
	"hPbeLPFre2atM/C5Yzsy0lgmOHr5GHz+HLriqt3cOpCptYj/tKX+Nw0seUETpelUdfb96g\n"
	"NeLBzkZTJrTgyFK9G3TVnubzXEXWMgiVhvVzH/AAAAAwEAAQAAAQARXK0nTClQOdpQA+28\n"
	"v2Zap4jY0iTKZvb1ixrKdRh9YP4Q89l2LvnE1JRfu9T7GY7EfQDp+nnqGaEHKTuWEu6qXM\n"
	"tyh6g4zKPw3V8pdc4IT7E7dRcxAb0kIOvp3JIq9MtRm3Ccs6OjkHPcP4Hcp1t1jm9GjniE\n"
	"YulSGn5gpJTacUiV4imdQiOD7Xh/FViim0kl2QucfrJOMv0xVrOC+yfr00ud7pJM0wpUcW\n"
	"rqx9O0Oqse012AyPRARsV323XNKZS0ShnTSCoroLWcMuNeVHURIeiZya2x1gE5Nk99P17n\n"
	"mrize1pELmXXuMt3ecP9qhHbq+FShO+Rk4JYTXMxwCdpAAAAgQDA7dBZAd/Fen4maWsnW4\n"
	"nTPH4K6ss1gHsFnRnJeTCgqDEbKDOrwxiglBxcVMGzk6IWnRyCyvzodb5iIWa2ihAjESCj\n"
	"slt76qBME9EFZpZapSexIBLmosa0j4VTlDoKAE6cPcVG3DstlGaVmmTtLUVWsSFsoaZcA9\n"
	"zgnsenYVvtswAAAIEA/nh2PMEDvoEu7rd3ZcM0VFRXjL3/h83Xcl+zY3YpE47+Wk+MG25e\n"
	"wHSy0hBHuXsJvProMrv4irVXwZuqk8OGUNN4Pq7QktamyQd7aRd8/s0J8jKvV1MWLajcIU\n"
	"YWisVMO8DUJs5oy5t5gwy4VrD9LHme2OcFUrIGeXR5rNle+GMAAACBAM9VnPrLVgoSbDuS\n"
	"rqRJEHLi5GQubyRBQJ6iDMekCYjjVOW/vMXcMKCfTSA9JMWDcQJE5dwfYH+jVFYhECrEgS\n"
	"BqIS/AwK7ziJ7ErHBmV64SsMtxbh+4Q71Iv1ujgqhJQbxvTMYAdCpgTqBhQ25a7Q5qn/HT\n"
	"JPq9/eObSQ0iuly1AAAAEWhwbi1mdXp6LWhvc3RfcnNhAQ==\n"
	"-----END OPENSSH PRIVATE KEY-----\n";

static const char fz_key_user_ed25519[] =
	"-----BEGIN OPENSSH PRIVATE KEY-----\n"
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
	"QyNTUxOQAAACCvDNdF2NXkE1Y4LX19El09mp6rGggue+kXrbh+c9g/bQAAAJjX9VK31/VS\n"
	"twAAAAtzc2gtZWQyNTUxOQAAACCvDNdF2NXkE1Y4LX19El09mp6rGggue+kXrbh+c9g/bQ\n"
	"AAAEAAZNJufZj5dmCB+lxSF6zYTa6yqUlc6YXwc7Qitn9Tcq8M10XY1eQTVjgtfX0SXT2a\n"
	"nqsaCC576RetuH5z2D9tAAAAFWhwbi1mdXp6LXVzZXJfZWQyNTUxOQ==\n"
	"-----END OPENSSH PRIVATE KEY-----\n";

static const char fz_key_user_rsa[] =
	"-----BEGIN OPENSSH PRIVATE KEY-----\n"
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABFwAAAAdzc2gtcn\n"
	"NhAAAAAwEAAQAAAQEAxijHNy/sLIzMhC0jFok4zfmjhMaXP14l1KbE+rZdk0UkU9oiOI1j\n"
	"s29VHbOuPV9d/f+xKtZJBwnMv40Qd7cs6Qrc/gjYZp8qK7OtvMKG9YepPOaD0nSdsD6U2c\n"
	"hIlFdG/YgOiSwYDSY5NjIUOS1CSW+IRIUnc+yLgf4kaW0rVQSl/0BD41XRE3dpvT1z+ONJ\n"
	"EZc7o7shwHY/QexAm3m8UKkexPGdzhEVR3ftk2HMaI67TbVEjZ+AS0g9dSfWGTPthtGXYq\n"
	"Hk/lfvx/XICJ0pMTURdZCqjdB6wNTQNG4WpQHhk9X0EwEwAOq2HheEyFMPtGr/Uai07LGv\n"
	"yPKUxuNWUQAAA8j7c/MY+3PzGAAAAAdzc2gtcnNhAAABAQDGKMc3L+wsjMyELSMWiTjN+a\n"
	"OExpc/XiXUpsT6tl2TRSRT2iI4jWOzb1Uds649X139/7Eq1kkHCcy/jRB3tyzpCtz+CNhm\n"
	"nyors628wob1h6k85oPSdJ2wPpTZyEiUV0b9iA6JLBgNJjk2MhQ5LUJJb4hEhSdz7IuB/i\n"
	"RpbStVBKX/QEPjVdETd2m9PXP440kRlzujuyHAdj9B7ECbebxQqR7E8Z3OERVHd+2TYcxo\n"
	"jrtNtUSNn4BLSD11J9YZM+2G0ZdioeT+V+/H9cgInSkxNRF1kKqN0HrA1NA0bhalAeGT1f\n"
	"QTATAA6rYeF4TIUw+0av9RqLTssa/I8pTG41ZRAAAAAwEAAQAAAQAD3BJ5SDUs7vci0fA/\n"
	"hZ+2H1kogme6w74v5KmsinXLIwsgmPyWpmZdPdtmDzRjHKLrihns0Cyu9ulmh7xc4JP+3A\n"
	"fO6OQyJ4J+RGsrZIyVZrWMqp7BsCTMJIPotAZ54TNQR+CkmlfDlc2CeTo8nN2QKZx5XTCW\n"
	"CPL0rrsN1KMF7l7zXPWQCEbpM2ztL4JSAjQXvBEUOrQcnA/LB6BZ2ojqb+G5dNQqnfyo4l\n"
	"ULGjJdkT+MSEabDxfEU8lU5Pb4qo/TSwFBrDghVjmZS+WOgN0qMTpM2VdFtyfNVWUOiY3H\n"
	"XYQ5AXcgsIjtMnSecjty/FoShdljomdpAeiHW/iHeL/LAAAAgH4P+zci7ngGABPwQ1CdA7\n"
	"euPmf9DQe4jIY6aehnV7XZjw0Fau+VQnYRc1Jx3CB3qbvbTmaSWdatbfrRkfb/RARLei52\n"
	"f3JDpDG7gKf9XudQ9eXgcyRFPr+ZLJeqxNPd9E5qwFxhAxnRETJZ8fkn6pHxoFiRcT+cyt\n"
	"pkF1hMYfs+AAAAgQDyD8LVNrPKD3KB1Wd7gI/pBVMUEl7iR+5RPi+bxGW4lKfEQ43FTVsh\n"
	"kmkfy7wCfN6Vz6q5vWz1W/WCN6bZQI0PdpG2PpIuhuN2XwE89meYDM41YN5r4IahUYr99x\n"
	"6kcam/uxyg0n6yMEaaAW6yY25p8i8OusU1ipXznnsGzu+P+wAAAIEA0ZHaGb5p4p7gFGey\n"
	"xe2kRrDibLKYPmfAGlFD1mEtuyQ7FD7lxsPdGooKtQZ4q/xpOr6NhdUr2/jwVJ+c5A1jr3\n"
	"cQikSOGQZf7lNMAwTjgkpTtXW7vx3pLngsXNUAxIq5YWp8IZXPeo9JMrF/B0uQTiTrb/Dg\n"
	"R6YHxfBoiSq8RSMAAAARaHBuLWZ1enotdXNlcl9yc2EBAg==\n"
	"-----END OPENSSH PRIVATE KEY-----\n";

#endif /* HPN_FUZZ_KEYS_H */
